"""Whitelisted RPC methods under /api/method/<dotted.path> (frappe.client and friends)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from demo_erp import documents, permissions, query, records
from demo_erp.context import Ctx
from demo_erp.exceptions import DoesNotExistError, PermissionError, ValidationError
from demo_erp.filters import decode, parse
from demo_erp.meta import get_meta

Args = dict[str, Any]
Handler = Callable[[Ctx, Args], Any]
WRITE_VERBS = frozenset({"POST", "PUT"})
ANY_VERB = frozenset({"GET", "POST", "PUT", "DELETE"})


@dataclass(frozen=True)
class Method:
    handler: Handler
    verbs: frozenset[str] = ANY_VERB
    allow_guest: bool = False


METHODS: dict[str, Method] = {}


def whitelist(
    path: str, verbs: frozenset[str] = ANY_VERB, allow_guest: bool = False
) -> Callable[[Handler], Handler]:
    def wrap(fn: Handler) -> Handler:
        METHODS[path] = Method(fn, verbs, allow_guest)
        return fn

    return wrap


def _required(args: Args, key: str) -> Any:
    value = args.get(key)
    if value in (None, ""):
        raise ValidationError(f"{key} is required")
    return value


def _doc_arg(args: Args, key: str = "doc") -> dict[str, Any]:
    doc = decode(args.get(key))
    if not isinstance(doc, dict):
        raise ValidationError(f"{key} must be a JSON object")
    return doc


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("1", "true", "yes") if value is not None else False


@whitelist("ping", allow_guest=True)
def ping(ctx: Ctx, args: Args) -> str:
    return "pong"


@whitelist("frappe.auth.get_logged_user")
def get_logged_user(ctx: Ctx, args: Args) -> str:
    return ctx.user


@whitelist("frappe.core.doctype.user.user.get_roles")
def get_roles(ctx: Ctx, args: Args) -> list[str]:
    from demo_erp.context import load_roles

    uid = args.get("uid") or (ctx.user if ctx.settings.version >= 16 else None)
    if not uid:
        raise ValidationError("uid is required")
    roles, _ = load_roles(ctx.conn, str(uid))
    return sorted(roles)


@whitelist("frappe.core.doctype.user_permission.user_permission.get_user_permissions")
def get_user_permissions(ctx: Ctx, args: Args) -> dict[str, list[dict[str, Any]]]:
    return {
        allow: [{"doc": value, "applicable_for": None, "is_default": 0} for value in sorted(values)]
        for allow, values in ctx.user_permissions().items()
    }


@whitelist(
    "frappe.core.doctype.session_default_settings.session_default_settings.get_session_default_values"
)
def get_session_default_values(ctx: Ctx, args: Args) -> str:
    """The desk's session defaults for the signed-in user, as Frappe returns them (a JSON list):
    the user's DefaultValue, else the only Company their User Permissions allow."""
    row = ctx.conn.execute(
        'select defvalue from "tabDefaultValue" where parent = ? and defkey = ?',
        (ctx.user, "company"),
    ).fetchone()
    allowed = sorted(ctx.user_permissions().get("Company", ()))
    company = row["defvalue"] if row else (allowed[0] if len(allowed) == 1 else None)
    field = {"fieldname": "company", "fieldtype": "Link", "options": "Company",
             "label": "Default Company", "default": company}  # fmt: skip
    return json.dumps([field])


@whitelist("frappe.utils.change_log.get_versions")
def get_versions(ctx: Ctx, args: Args) -> dict[str, Any]:
    frappe_version = "16.4.1" if ctx.settings.version >= 16 else "15.54.1"
    erpnext_version = "16.0.0" if ctx.settings.version >= 16 else "15.109.0"
    return {
        "frappe": {"title": "Frappe Framework", "version": frappe_version},
        "erpnext": {"title": "ERPNext", "version": erpnext_version},
    }


def _fields_arg(value: Any) -> Any:
    """``fields`` as JSON: a list, or a JSON string such as ``"*"`` (old clients send that)."""
    if isinstance(value, str) and value[:1] == '"':
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"Invalid JSON: {value[:80]}") from exc
    return value


def list_args(args: Args) -> dict[str, Any]:
    return {
        "fields": _fields_arg(args.get("fields")),
        "filters": args.get("filters"),
        "or_filters": args.get("or_filters"),
        "order_by": args.get("order_by"),
        "group_by": args.get("group_by"),
        "limit_start": args.get("limit_start") or 0,
        "limit_page_length": args.get("limit_page_length", args.get("limit", 20)),
        "as_dict": str(args.get("as_dict", "1")).lower() not in ("0", "false"),
        "parent": args.get("parent"),
    }


@whitelist("frappe.client.get_list")
def client_get_list(ctx: Ctx, args: Args) -> list[Any]:
    return query.get_list(ctx, str(_required(args, "doctype")), **list_args(args))


@whitelist("frappe.client.get_count")
def client_get_count(ctx: Ctx, args: Args) -> int:
    # v15's frappe.client.get_count is frappe.db.count: no permission check at all.
    return query.get_count(
        ctx,
        str(_required(args, "doctype")),
        args.get("filters"),
        check_permissions=ctx.settings.version >= 16,
    )


@whitelist("frappe.desk.reportview.get_count")
def reportview_get_count(ctx: Ctx, args: Args) -> int:
    return query.get_count(ctx, str(_required(args, "doctype")), args.get("filters"))


@whitelist("frappe.client.get")
def client_get(ctx: Ctx, args: Args) -> dict[str, Any]:
    doctype = str(_required(args, "doctype"))
    name = args.get("name")
    if not name and args.get("filters"):
        rows = query.get_list(ctx, doctype, filters=args["filters"], limit_page_length=1)
        if not rows:
            raise DoesNotExistError(f"{doctype} not found")
        name = rows[0]["name"]
    if not name:
        raise ValidationError("name or filters is required")
    return documents.get(ctx, doctype, str(name))


@whitelist("frappe.client.get_value")
def client_get_value(ctx: Ctx, args: Args) -> Any:
    doctype = str(_required(args, "doctype"))
    fieldname = decode(_required(args, "fieldname"))
    fields = fieldname if isinstance(fieldname, list) else [fieldname]
    filters = decode(args.get("filters"))
    meta = records.require_meta(doctype)
    if not permissions.has_doctype_permission(ctx, meta, "read"):
        raise PermissionError("", error_message=f"No permission for {doctype}")
    conditions = (
        parse(filters, doctype, ctx.settings.version) if not isinstance(filters, str) else filters
    )
    rows = query.get_list(
        ctx,
        doctype,
        fields=fields,
        filters=[["name", "=", conditions]] if isinstance(conditions, str) else filters,
        limit_page_length=1,
    )
    if not rows:
        return {} if _truthy(args.get("as_dict", "1")) else None
    row = rows[0]
    if _truthy(args.get("as_dict", "1")):
        return row
    values = list(row.values())
    return values[0] if len(values) == 1 else values


@whitelist("frappe.client.insert", WRITE_VERBS)
def client_insert(ctx: Ctx, args: Args) -> dict[str, Any]:
    doc = _doc_arg(args)
    return documents.insert(ctx, str(_required(doc, "doctype")), doc)


@whitelist("frappe.client.save", WRITE_VERBS)
def client_save(ctx: Ctx, args: Args) -> dict[str, Any]:
    doc = _doc_arg(args)
    return documents.save(
        ctx, str(_required(doc, "doctype")), str(_required(doc, "name")), doc, check_modified=True
    )


@whitelist("frappe.client.submit", WRITE_VERBS)
def client_submit(ctx: Ctx, args: Args) -> dict[str, Any]:
    doc = _doc_arg(args)
    doctype, name = str(_required(doc, "doctype")), str(_required(doc, "name"))
    # Frappe: get_doc(doc).submit() — docstatus 1, then save(), which checks ``modified``.
    return documents.save(ctx, doctype, name, {**doc, "docstatus": 1}, check_modified=True)


@whitelist("frappe.client.cancel", WRITE_VERBS)
def client_cancel(ctx: Ctx, args: Args) -> dict[str, Any]:
    return documents.cancel(ctx, str(_required(args, "doctype")), str(_required(args, "name")))


@whitelist("frappe.client.set_value", WRITE_VERBS)
def client_set_value(ctx: Ctx, args: Args) -> dict[str, Any]:
    doctype, name = str(_required(args, "doctype")), str(_required(args, "name"))
    fieldname = decode(_required(args, "fieldname"))
    values = fieldname if isinstance(fieldname, dict) else {str(fieldname): args.get("value")}
    standard = {"name", "owner", "creation", "modified", "modified_by", "docstatus", "idx"}
    if standard & set(values):
        raise ValidationError("Cannot edit standard fields")
    return documents.save(ctx, doctype, name, values)


@whitelist("frappe.client.delete", frozenset({"POST", "DELETE"}))
def client_delete(ctx: Ctx, args: Args) -> None:
    documents.delete(ctx, str(_required(args, "doctype")), str(_required(args, "name")))


@whitelist("frappe.client.rename_doc", WRITE_VERBS)
def client_rename_doc(ctx: Ctx, args: Args) -> str:
    """``frappe.client.rename_doc(doctype, old_name, new_name, merge=False)``: the new name."""
    from demo_erp import rename

    return rename.rename_doc(
        ctx,
        str(_required(args, "doctype")),
        str(_required(args, "old_name")),
        str(args.get("new_name") or ""),
        merge=_truthy(args.get("merge")),
    )


def check_doc_method(doctype: str, method: str) -> None:
    """Only whitelisted controller methods run: ``submit`` and ``cancel`` of ``Document``."""
    if method not in ("submit", "cancel"):
        raise PermissionError(
            f"Method {method} is not whitelisted on {doctype}", title="Not Permitted"
        )


def run_doc_method(ctx: Ctx, doctype: str, name: str, method: str, verb: str) -> Any:
    """A whitelisted controller method on a stored document (``run_method`` in v1, the
    ``/method/`` route in v2)."""
    check_doc_method(doctype, method)
    if verb == "GET":
        documents.get(ctx, doctype, name)  # GET needs read permission only, then runs
    if method == "submit":
        return documents.submit(ctx, doctype, name)
    return documents.cancel(ctx, doctype, name)


@whitelist("frappe.client.has_permission")
def client_has_permission(ctx: Ctx, args: Args) -> dict[str, bool]:
    doctype = str(_required(args, "doctype"))
    ptype = str(args.get("perm_type") or "read")
    name = args.get("docname")
    if name:
        doc = records.load(ctx, doctype, str(name))
        return {"has_permission": permissions.has_permission(ctx, doctype, ptype, doc)}
    return {"has_permission": permissions.has_permission(ctx, doctype, ptype)}


@whitelist("frappe.client.get_doc_permissions")
def client_get_doc_permissions(ctx: Ctx, args: Args) -> dict[str, dict[str, int]]:
    doctype, name = str(_required(args, "doctype")), str(_required(args, "docname"))
    doc = records.load(ctx, doctype, name)
    rights = ("read", "write", "create", "delete", "submit", "cancel", "report", "export")
    return {
        "permissions": {r: int(permissions.has_permission(ctx, doctype, r, doc)) for r in rights}
    }


@whitelist("frappe.desk.form.load.getdoctype")
def getdoctype(ctx: Ctx, args: Args) -> None:
    raise AssertionError("served by the router: its reply has no 'message' key")


def doctype_bundle(doctype: str) -> list[dict[str, Any]]:
    """The DocType and its child DocTypes, as getdoctype returns them in ``docs``."""
    meta = get_meta(doctype)
    if meta is None:
        raise DoesNotExistError(
            f"DocType {doctype} not found",
            messages=[{"message": f"DocType {doctype} not found", "title": "Message"}],
        )
    docs = [meta.as_dict()]
    for table in meta.table_fields:
        child = get_meta(table.options)
        if child is not None:
            docs.append(child.as_dict())
    return docs


@whitelist("frappe.desk.query_report.run")
def query_report_run(ctx: Ctx, args: Args) -> dict[str, Any]:
    from demo_erp import reports

    return reports.run(
        ctx,
        str(_required(args, "report_name")),
        args.get("filters"),
        args.get("ignore_prepared_report", False),
    )


@whitelist("frappe.desk.query_report.get_script")
def query_report_get_script(ctx: Ctx, args: Args) -> dict[str, Any]:
    """The report's client script and filters, after the same permission checks as ``run``."""
    from demo_erp import reports

    definition = reports.get_report(ctx, str(_required(args, "report_name")))
    return {
        "script": "",
        "html_format": None,
        "execution_time": 0,
        "filters": definition.filters,
        "custom_report_name": None,
    }


@whitelist("frappe.model.workflow.get_transitions")
def workflow_get_transitions(ctx: Ctx, args: Args) -> list[dict[str, Any]]:
    from demo_erp import workflow

    doc = _doc_arg(args)
    return workflow.get_transitions(ctx, doc)


@whitelist("frappe.model.workflow.apply_workflow", WRITE_VERBS)
def workflow_apply(ctx: Ctx, args: Args) -> dict[str, Any]:
    from demo_erp import workflow

    doc = _doc_arg(args)
    return workflow.apply_workflow(ctx, doc, str(_required(args, "action")))


__all__ = ["METHODS", "Method", "doctype_bundle", "json"]


@whitelist("frappe.core.doctype.user.user.generate_keys", WRITE_VERBS)
def generate_keys(ctx: Ctx, args: Args) -> dict[str, str]:
    """Frappe's generate_keys: System Manager only; keeps the user's api_key (making one if
    absent) and issues a new api_secret, which ends the previous one."""
    import secrets

    from demo_erp import auth

    if "System Manager" not in ctx.roles:
        raise PermissionError("Not permitted")
    user = str(_required(args, "user"))
    row = ctx.conn.execute('select api_key from "tabUser" where name = ?', (user,)).fetchone()
    if row is None:
        raise DoesNotExistError(f"User {user} not found")
    api_key = str(row["api_key"] or secrets.token_hex(8)[:15])
    api_secret = secrets.token_hex(8)[:15]
    auth.set_api_key(ctx.conn, user, api_key, api_secret)
    return {"api_key": api_key, "api_secret": api_secret}
