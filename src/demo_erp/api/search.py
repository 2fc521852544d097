"""``frappe.desk.search.search_link``: the search behind every Link field, as Frappe v15 runs it
(``search_widget`` + ``build_for_autosuggest``), through the user's permissions.

The text is matched (``like %txt%``) against the name, the title field and the DocType's
search fields; disabled records are left out; rows are ordered by where the text appears in the
name (earliest first, no match last), then ``idx`` and ``modified`` descending. Each result is
``{"value": name, "description": "<the other fields, comma-separated>"}``.
"""

from __future__ import annotations

from typing import Any

from demo_erp import query, records
from demo_erp.api.methods import Args, _required, whitelist
from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.filters import decode
from demo_erp.meta import DocType, all_doctypes

# ERPNext's own link queries (erpnext.controllers.queries.*) narrow and describe the rows in
# their own ways; here they fall back to the standard search.
_STANDARD_QUERIES = "erpnext.controllers.queries."
_SEARCHABLE_TYPES = frozenset(
    {"Data", "Text", "Small Text", "Long Text", "Link", "Select", "Read Only", "Text Editor"}
)


def _fields(meta: DocType, searchfield: str | None) -> list[str]:
    """``get_std_fields_list``: name, the search fields, the title field, the searchfield."""
    out = ["name"]
    for name in (*meta.search_fields, meta.title_field, searchfield or "name"):
        if name and name not in out and (name == "name" or meta.get_field(name)):
            out.append(name)
    return out


def _filters(meta: DocType, raw: Any) -> list[Any]:
    filters = decode(raw) or []
    if isinstance(filters, dict):
        filters = [
            [k, v[0], v[1]] if isinstance(v, (list, tuple)) else [k, "=", v]
            for k, v in filters.items()
        ]
    if not isinstance(filters, list):
        raise ValidationError("filters must be a list or a dict")
    filters = list(filters)
    if meta.get_field("enabled"):
        filters.append(["enabled", "=", 1])
    if meta.get_field("disabled"):
        filters.append(["disabled", "!=", 1])
    return filters


def _relevance(txt: str, name: Any) -> float:
    """Frappe's ``1 / nullif(locate(txt, name), 0)``: an earlier match ranks higher."""
    where = str(name).lower().find(txt.lower())
    return 1 / (where + 1) if where >= 0 else -9999.0


def _doctypes(txt: str, raw_filters: Any) -> list[list[Any]]:
    """Searching DocType itself (Frappe ignores permissions there): the DocType names."""
    filters = decode(raw_filters) or {}
    wanted = filters if isinstance(filters, dict) else {}
    rows = []
    for meta in all_doctypes().values():
        values = meta.as_dict()
        if any(str(values.get(k)) != str(v) for k, v in wanted.items()):
            continue
        if txt.lower() in meta.name.lower():
            rows.append([meta.name, meta.module])
    return sorted(rows, key=lambda r: (-_relevance(txt, r[0]), r[0]))


def search_widget(
    ctx: Ctx,
    doctype: str,
    txt: str,
    filters: Any = None,
    page_length: int = 10,
    start: int = 0,
    searchfield: str | None = None,
) -> list[list[Any]]:
    """The matching rows, each the name followed by the other listed fields."""
    if doctype == "DocType":
        return _doctypes(txt, filters)[start : start + page_length]
    meta = records.require_meta(doctype)
    fields = _fields(meta, searchfield)
    or_filters = []
    if txt:
        searched = ["name", meta.title_field, *meta.search_fields]
        for name in dict.fromkeys(f for f in searched if f):
            f = meta.get_field(name)
            if name == "name" or (f and f.fieldtype in _SEARCHABLE_TYPES):
                or_filters.append([name, "like", f"%{txt}%"])
    rows = query.get_list(
        ctx,
        doctype,
        fields=[*fields, "idx", "modified"],
        filters=_filters(meta, filters),
        or_filters=or_filters or None,
        order_by="idx desc, modified desc",
        limit_page_length=0 if txt else page_length,
        limit_start=0 if txt else start,
        as_dict=False,
    )
    if txt:  # the relevance order needs every match; a page is cut after sorting
        rows.sort(key=lambda r: -_relevance(txt, r[0]))  # stable: idx, modified stay next
        rows = rows[start : start + page_length]
    return [list(r[: len(fields)]) for r in rows]


def build_for_autosuggest(rows: list[list[Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        parts = [str(p) for p in row[1:] if p not in (None, "")]
        out.append({"value": row[0], "description": ", ".join(dict.fromkeys(parts))})
    return out


@whitelist("frappe.desk.search.search_link")
def search_link(ctx: Ctx, args: Args) -> list[dict[str, Any]]:
    doctype = str(_required(args, "doctype"))
    custom = args.get("query")
    if custom and not str(custom).startswith(_STANDARD_QUERIES):
        raise ValidationError(f"Failed to get method {custom} with No module named '{custom}'")
    try:
        page_length = int(args.get("page_length") or 10)
        start = int(args.get("start") or 0)
    except (TypeError, ValueError) as exc:
        raise ValidationError("page_length and start must be integers") from exc
    rows = search_widget(
        ctx,
        doctype,
        str(args.get("txt") or "").strip(),
        args.get("filters"),
        page_length,
        start,
        args.get("searchfield") or None,
    )
    return build_for_autosuggest(rows)
