"""A read-only, desk-like page per document at ``/app/<doctype-slug>/<name>``, as ERPNext's
links point there, and the ``/login`` page it sends a signed-out visitor to.

Pages show what the API would return to the same user: the document goes through
``documents.get`` (role, user-permission and field-level checks). Every value is escaped.
"""

from __future__ import annotations

import html
import urllib.parse
from typing import Any

from demo_erp.meta import DocType, all_doctypes, get_meta

_STANDARD = ("owner", "creation", "modified", "modified_by")
_DOCSTATUS = {0: "Draft", 1: "Submitted", 2: "Cancelled"}
_STYLE = """
body{font:14px system-ui,sans-serif;margin:0;background:#f4f5f6;color:#1f272e}
header{background:#fff;border-bottom:1px solid #e2e6e9;padding:12px 24px}
main{max-width:1000px;margin:24px auto;background:#fff;border:1px solid #e2e6e9;
border-radius:8px;padding:20px 24px}
h1{font-size:20px;margin:0 0 4px}.badge{display:inline-block;padding:2px 8px;border-radius:10px;
background:#e2e6e9;font-size:12px;margin-left:8px}
dl{display:grid;grid-template-columns:220px 1fr;gap:6px 16px}dt{color:#687178}dd{margin:0}
table{border-collapse:collapse;width:100%;margin:8px 0 16px}
th,td{border:1px solid #e2e6e9;padding:4px 8px;text-align:left}th{background:#f8f8f8}
td.num{text-align:right}form label{display:block;margin:8px 0 2px}
.error{color:#b52a2a}
"""


def slug(doctype: str) -> str:
    return doctype.lower().replace(" ", "-")


def doctype_for_slug(value: str) -> DocType | None:
    """The DocType a desk URL names (``sales-order`` → Sales Order); child tables have none."""
    wanted = urllib.parse.unquote(value).lower()
    for meta in all_doctypes().values():
        if not meta.istable and slug(meta.name) == wanted:
            return meta
    return None


def _page(title: str, body: str, user: str | None = None) -> str:
    who = f"<span style='float:right'>{html.escape(user)}</span>" if user else ""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><header><strong>Demo ERP</strong>{who}</header><main>{body}</main></body></html>"
    )


def _cell(value: Any, fieldtype: str) -> str:
    if value is None or value == "":
        return ""
    if fieldtype in ("Currency", "Float", "Percent") and isinstance(value, (int, float)):
        return f"{value:,.2f}"
    if fieldtype == "Check":
        return "Yes" if value else "No"
    return html.escape(str(value))


def _link(fieldtype: str, options: str, doc: dict[str, Any], value: Any) -> str | None:
    """A Link (or Dynamic Link) value's own desk page."""
    target = doc.get(options) if fieldtype == "Dynamic Link" else options
    if fieldtype not in ("Link", "Dynamic Link") or not target or not value:
        return None
    meta = get_meta(str(target))
    if meta is None or meta.istable:
        return None
    return f"/app/{slug(meta.name)}/{urllib.parse.quote(str(value), safe='')}"


def document_page(meta: DocType, doc: dict[str, Any], user: str) -> str:
    """The document's fields in form order, then each child table as a table."""
    status = _DOCSTATUS.get(int(doc.get("docstatus") or 0), "")
    badges = f"<span class='badge'>{status}</span>" if meta.is_submittable else ""
    if doc.get("workflow_state"):
        badges += f"<span class='badge'>{html.escape(str(doc['workflow_state']))}</span>"
    title = html.escape(str(doc.get(meta.title_field) or "")) if meta.title_field else ""
    parts = [
        f"<p><a href='/app/{slug(meta.name)}'>{html.escape(meta.name)}</a></p>",
        f"<h1 id='doc-name'>{html.escape(str(doc['name']))}{badges}</h1>",
        f"<p>{title}</p>" if title else "",
        "<dl>",
    ]
    for f in meta.fields:
        if f.is_table or f.fieldname not in doc:
            continue
        value = doc.get(f.fieldname)
        if value in (None, "", 0) and f.fieldtype not in ("Currency", "Float"):
            continue
        shown = _cell(value, f.fieldtype)
        href = _link(f.fieldtype, f.options, doc, value)
        if href:
            shown = f"<a href='{html.escape(href)}'>{shown}</a>"
        parts.append(f"<dt>{html.escape(f.label)}</dt><dd data-field='{f.fieldname}'>{shown}</dd>")
    for fieldname in _STANDARD:
        if doc.get(fieldname):
            label = fieldname.replace("_", " ").capitalize()
            parts.append(f"<dt>{label}</dt><dd>{html.escape(str(doc[fieldname]))}</dd>")
    parts.append("</dl>")
    for table in meta.table_fields:
        rows = doc.get(table.fieldname) or []
        child = get_meta(table.options)
        if not rows or child is None:
            continue
        columns = [
            c for c in child.fields if any(r.get(c.fieldname) not in (None, "") for r in rows)
        ]
        head = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
        body = "".join(
            f"<tr><td>{i}</td>"
            + "".join(
                f"<td class='{'num' if c.fieldtype in ('Currency', 'Float') else ''}'>"
                f"{_cell(r.get(c.fieldname), c.fieldtype)}</td>"
                for c in columns
            )
            + "</tr>"
            for i, r in enumerate(rows, start=1)
        )
        parts.append(
            f"<h3>{html.escape(table.label)}</h3>"
            f"<table data-table='{table.fieldname}'><tr><th>#</th>{head}</tr>" + body + "</table>"
        )
    return _page(f"{doc['name']} · {meta.name}", "".join(parts), user)


def message_page(title: str, message: str, user: str | None = None) -> str:
    return _page(title, f"<h1>{html.escape(title)}</h1><p class='error'>{message}</p>", user)


def safe_redirect(target: str | None) -> str:
    """Only a path on this site (never ``//host`` or a full URL)."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/app"
    return target


def login_page(redirect_to: str | None) -> str:
    target = html.escape(safe_redirect(redirect_to))
    form = f"""
<h1>Sign in</h1>
<form id="login" data-next="{target}">
<label for="usr">Email</label><input id="usr" name="usr" autocomplete="username" required>
<label for="pwd">Password</label>
<input id="pwd" name="pwd" type="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p><p class="error" id="login-error"></p>
</form>
<script>
document.getElementById("login").addEventListener("submit", async (event) => {{
  event.preventDefault();
  const form = event.target;
  const reply = await fetch("/api/method/login", {{
    method: "POST", headers: {{"Content-Type": "application/json"}},
    body: JSON.stringify({{usr: form.usr.value, pwd: form.pwd.value}}),
  }});
  if (reply.ok) {{ location.href = form.dataset.next; return; }}
  const body = await reply.json().catch(() => ({{}}));
  document.getElementById("login-error").textContent = body.message || "Sign-in failed";
}});
</script>"""
    return _page("Sign in", form)
