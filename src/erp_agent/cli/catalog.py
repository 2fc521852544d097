"""`erp-agent catalog suggest --as USER`: custom fields the ERP has that the catalog does not,
as overlay entries for ERP_AGENT_SITE_DIR (docs/extending.md). Nothing is written: review the
printed YAML, put it in the site folder, and restart."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer
import yaml

from erp_agent.cli._common import console, run_as_user
from erp_agent.connectors.base import Connector, FieldInfo
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import MARKER_FIELDS
from erp_agent.errors import ErpAgentError

app = typer.Typer(
    help="The catalog: `catalog suggest --as USER` proposes overlay entries for the ERP's custom fields.",
    no_args_is_help=True,
)

# Frappe field types as the catalog's compact field types.
TYPES = {
    "Data": "string", "Small Text": "text", "Text": "text", "Long Text": "text",
    "Select": "enum", "Link": "link", "Int": "integer", "Float": "number", "Currency": "money",
    "Percent": "number", "Check": "boolean", "Date": "date", "Datetime": "datetime",
}  # fmt: skip


def _canonical(native: str) -> str:
    return re.sub(r"^custom_", "", native)


def _spec(field: FieldInfo) -> str | None:
    kind = TYPES.get(field.type)
    if kind is None:
        return None  # tables, attachments, HTML: not offered as fields
    if kind == "enum":
        options = "|".join(o for o in (field.options or "").split("\n") if o)
        kind = f"enum({options})" if options else "string"
    elif kind == "link":
        kind = f"link({(field.options or '').lower().replace(' ', '_')})"
    return f"{kind} filter -- {field.label} (custom field {field.native})"


async def suggestions(connector: Connector, cred: Credential) -> dict[str, Any]:
    catalog = getattr(connector, "catalog", None)
    if catalog is None:
        raise typer.BadParameter("this connector has no catalog")
    entities: dict[str, Any] = {}
    maps: dict[str, Any] = {}
    for name in sorted(catalog.entities):
        try:
            described = await connector.describe(cred, name)
        except ErpAgentError:  # a doctype this user cannot read is skipped
            continue
        known = set(catalog.entity(name).fields)
        for field in described:
            if not field.custom or field.name in known or field.native in MARKER_FIELDS:
                continue  # the write marker is the agent's own bookkeeping, not a field to offer
            spec = _spec(field)
            if spec is None:
                continue
            canonical = _canonical(field.native)
            entities.setdefault(name, {"fields": {}})["fields"][canonical] = spec
            maps.setdefault(name, {"fields": {}})["fields"][canonical] = field.native
    return {"entities": entities, "maps": maps}


@app.command()
def suggest(
    user: Annotated[str, typer.Option("--as", help="ERP user whose metadata is read.")],
) -> None:
    """Print overlay entries for the custom fields the ERP has and the catalog does not."""
    found = run_as_user(user, suggestions)
    if not found["entities"]:
        console.print("No custom fields beyond the catalog's.")
        return
    by_module: dict[str, dict[str, Any]] = {}
    for name, entry in found["entities"].items():
        by_module.setdefault(_module(name), {})[name] = entry
    for module, entries in sorted(by_module.items()):
        console.print(f"# catalog/data/entities/{module}.yaml", markup=False)
        console.print(yaml.safe_dump(entries, sort_keys=False, allow_unicode=True), markup=False)
        console.print(f"# catalog/maps/erpnext/{module}.yaml", markup=False)
        maps = {n: found["maps"][n] for n in entries}
        console.print(
            yaml.safe_dump({"entities": maps}, sort_keys=False, allow_unicode=True), markup=False
        )


def _module(entity: str) -> str:
    from erp_agent.catalog import load_catalog

    for file_module, names in _modules_of(load_catalog()).items():
        if entity in names:
            return file_module
    return "setup"


def _modules_of(catalog: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, entity in catalog.entities.items():
        out.setdefault(entity.modules[0], set()).add(name)
    return out
