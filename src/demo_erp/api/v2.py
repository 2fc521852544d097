"""REST API v2 (Frappe's ``frappe/api/v2.py``): the document and doctype routes under
``/api/v2/``. The router (``app.py``) authenticates, serves ``/api/v2/method/...`` with the v1
methods (results under ``data``) and shapes errors as v2 does (``errors``, ``messages``).

| route | as Frappe serves it |
|---|---|
| ``GET document/{doctype}`` | v15: ``frappe.client.get_list`` with ``limit`` (default 20) as the page length; v16: ``start``/``limit`` and ``has_next_page`` |
| ``POST document/{doctype}`` | insert; the body is the document |
| ``GET document/{doctype}/{name}`` | the document, null fields kept (v1 drops them) |
| ``PATCH``/``PUT document/{doctype}/{name}`` | update and save |
| ``DELETE document/{doctype}/{name}`` | delete, 202 ``"ok"`` |
| ``GET``/``POST document/{doctype}/{name}/method/{method}`` | a whitelisted controller method (``submit``, ``cancel``): read right for GET, write for POST |
| ``GET doctype/{doctype}/meta`` | the DocType, for any signed-in user |
| ``GET doctype/{doctype}/count`` | ``frappe.desk.reportview.get_count`` |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from demo_erp import documents, permissions, query, records
from demo_erp.api.methods import check_doc_method, doctype_bundle, list_args, run_doc_method
from demo_erp.context import GUEST, Ctx
from demo_erp.exceptions import DoesNotExistError, PermissionError
from demo_erp.filters import decode

Args = dict[str, Any]
_READ_ONLY = ("flags",)


@dataclass
class Reply:
    """What a v2 route answers: ``data`` (absent when None), extra top-level keys, a status."""

    data: Any = None
    status: int = 200
    extra: dict[str, Any] = field(default_factory=dict)


def _payload(args: Args) -> dict[str, Any]:
    body = {k: v for k, v in args.items() if k not in ("doctype", *_READ_ONLY)}
    if "data" in body and isinstance(body["data"], str):  # a form-encoded ``data`` field
        decoded = decode(body["data"])
        if isinstance(decoded, dict):
            return decoded
    return body


def _list(ctx: Ctx, doctype: str, args: Args) -> Reply:
    if ctx.settings.version >= 16:
        # 16: its own query: ``start``/``limit``, one row more to say whether a page follows.
        limit = int(args.get("limit") or 20)
        params = {**list_args(args), "limit_start": int(args.get("start") or 0)}
        params["limit_page_length"] = limit + 1
        rows = query.get_list(ctx, doctype, **params)
        return Reply(rows[:limit], extra={"has_next_page": len(rows) > limit})
    # 15: ``limit`` becomes get_list's page length; everything else is passed through.
    params = {**list_args(args), "limit_page_length": args.get("limit") or 20}
    return Reply(query.get_list(ctx, doctype, **params))


def _doc_method(ctx: Ctx, doctype: str, name: str, method: str, verb: str) -> Reply:
    check_doc_method(doctype, method)  # Frappe asks is_whitelisted before any permission
    doc = records.load(ctx, doctype, name)
    ptype = "read" if verb == "GET" else "write"
    permissions.check_doctype(ctx, doctype, ptype)
    permissions.check_doc(ctx, doctype, ptype, doc)
    result = run_doc_method(ctx, doctype, name, method, verb)
    extra: dict[str, Any] = {}
    if ctx.settings.version >= 16:
        extra["docs"] = [documents.get(ctx, doctype, name)]
    return Reply(result, extra=extra)


def _document(ctx: Ctx, verb: str, parts: list[str], args: Args) -> Reply:
    doctype = parts[0]
    records.require_meta(doctype)
    rest = parts[1:]
    if rest and rest[-1] == "":  # Frappe's routes end document paths with a slash
        rest = rest[:-1]
    if not rest:
        if verb == "GET":
            return _list(ctx, doctype, args)
        if verb == "POST":
            return Reply(documents.insert(ctx, doctype, _payload(args)))
        raise DoesNotExistError("")
    if len(rest) >= 3 and rest[-2] == "method":
        if verb not in ("GET", "POST"):
            raise DoesNotExistError("")
        return _doc_method(ctx, doctype, "/".join(rest[:-2]), rest[-1], verb)
    name = "/".join(rest)
    if verb == "GET":
        return Reply(documents.get(ctx, doctype, name))
    if verb in ("PATCH", "PUT"):
        updates = {k: v for k, v in _payload(args).items() if k != "name"}
        return Reply(documents.save(ctx, doctype, name, updates))
    if verb == "DELETE":
        documents.delete(ctx, doctype, name)
        return Reply("ok", status=202)
    raise DoesNotExistError("")


def _doctype(ctx: Ctx, verb: str, parts: list[str], args: Args) -> Reply:
    if len(parts) != 2 or verb != "GET":
        raise DoesNotExistError("")
    doctype, what = parts
    if what == "meta":
        if ctx.user == GUEST:  # frappe.only_for("All"): every signed-in user has "All"
            raise PermissionError("Not permitted", title="Not Permitted")
        return Reply(doctype_bundle(doctype)[0])
    if what == "count":
        return Reply(query.get_count(ctx, doctype, args.get("filters")))
    raise DoesNotExistError("")


def handle(ctx: Ctx, verb: str, path: str, args: Args) -> Reply:
    """One v2 document or doctype request; ``path`` follows ``/api/v2/``."""
    kind, _, tail = path.partition("/")
    parts = tail.split("/")
    if not parts or not parts[0]:
        raise DoesNotExistError("")
    if kind == "document":
        return _document(ctx, verb, parts, args)
    if kind == "doctype":
        return _doctype(ctx, verb, parts, args)
    raise DoesNotExistError("")
