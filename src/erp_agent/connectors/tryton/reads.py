"""Reads the connector's core builds on: a document's table rows, company-currency totals of
foreign-currency invoices, and ``id like`` on Tryton's integer ids — each as the user."""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from erp_agent.connectors.base import Record
from erp_agent.connectors.query import Filter, Op
from erp_agent.connectors.tryton.native import Domain, Native, plain

if TYPE_CHECKING:
    from erp_agent.connectors.credentials import Credential
    from erp_agent.connectors.tryton.seam import Tryton


async def company_totals(
    connector: Tryton, cred: Credential, native: Native, rows: Sequence[dict[str, Any]]
) -> None:
    """Invoices in a foreign currency: their company-currency total from their move."""
    foreign = [r for r in rows if "total_amount" in r and "company." in r
               and r.get("currency") != (r.get("company.") or {}).get("currency")]  # fmt: skip
    if not foreign:
        return
    got = await connector.rpc(cred, f"{native.model}.read", [int(r["id"]) for r in foreign],
                         ["lines_to_pay.debit", "lines_to_pay.credit", "type"])  # fmt: skip
    by_id = {int(g["id"]): g for g in got}
    for row in foreign:
        lines = by_id.get(int(row["id"]), {}).get("lines_to_pay.") or []
        if lines:
            sign = 1 if row.get("type") == "out" else -1
            row["_company_total"] = sum(
                (sign * (ln["debit"] - ln["credit"]) for ln in lines), start=0
            )


async def ids_like(connector: Tryton, cred: Credential, native: Native, domain: Domain, flt: Filter) -> Domain:  # fmt: skip
    """``id like '%12'``: Tryton's ids are integers, matched here as text (exactly)."""
    ids = await connector.rpc(cred, f"{native.model}.search", domain, 0, None, None)
    pattern = re.escape(str(flt.value).lower()).replace("%", ".*").replace("_", ".")
    hit = [i for i in ids if re.fullmatch(pattern, str(i))]
    if flt.op is Op.NOT_LIKE:
        hit = [i for i in ids if i not in set(hit)]
    return [("id", "in", hit)]


async def table(connector: Tryton, cred: Credential, native: Native, rid: int, name: str) -> builtins.list[Record]:  # fmt: skip
    fmap = native.fmap(name)
    child = connector._fields.get(str(fmap.doctype))
    if child is None:
        child = dict(await connector.rpc(cred, f"{fmap.doctype}.fields_get", []))
        connector._fields[str(fmap.doctype)] = child
    wanted = ["id"]
    for row_map in fmap.fields.values():
        kind = child.get(row_map.native, {}).get("type")
        wanted += [row_map.native] + ([f"{row_map.native}.rec_name"] if kind == "many2one" else [])
    parent = native.fields[fmap.native].get("relation_field") or "invoice"
    rows = await connector.rpc(cred, f"{fmap.doctype}.search_read", [(parent, "=", rid)], 0, None,
                          [["sequence", "ASC"], ["id", "ASC"]], wanted)  # fmt: skip
    out = []
    for row in rows:
        line: Record = {}
        for cname, row_map in fmap.fields.items():
            value = row.get(row_map.native)
            linked = row.get(f"{row_map.native}.")
            line[cname] = linked.get("rec_name") if isinstance(linked, Mapping) else plain(value)
        out.append(line)
    return out
