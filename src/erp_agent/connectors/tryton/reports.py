"""Tryton's tabular reports: context models read as the user.

Tryton's printable reports are documents (ODT/PDF); its tabular ones are models whose rows
Tryton computes on the server from a context: the aged balance (``account.aged_balance``: what
each party owes, in terms) and the general ledger (``account.general_ledger.account``: each
account's opening balance, debit, credit and closing balance over a period). Both compute per
company, so a user who sees two companies gets one block of rows per company.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from erp_agent.connectors.base import ReportResult
from erp_agent.connectors.tryton.native import coerce, plain
from erp_agent.errors import CatalogError

if TYPE_CHECKING:
    from erp_agent.connectors.credentials import Credential
    from erp_agent.connectors.tryton.seam import Tryton

REPORTS = ("accounts_receivable", "accounts_payable", "general_ledger")
_MODELS = {"accounts_receivable": "account.aged_balance",
           "accounts_payable": "account.aged_balance",
           "general_ledger": "account.general_ledger.account"}  # fmt: skip


async def allowed(connector: Tryton, cred: Credential, report: str) -> bool:
    model = _MODELS.get(report)
    if model is None:
        return False
    got = await connector.rpc(cred, "ir.model.access.get_access", [model])
    return bool((got.get(model) or {}).get("read"))


async def _companies(connector: Tryton, cred: Credential, wanted: Any) -> list[tuple[int, str]]:  # fmt: skip
    """The companies the user works in (their Tryton user record: ``companies``, or only the
    current one under ``company_filter = one``), narrowed to ``wanted`` by name. Tryton computes
    these reports per company from its ledger, so the user's own companies bound them."""
    scope = await connector.data_scope(cred)
    mine = {int(v) for key, values in (scope.restrictions if scope else ()) for v in values
            if key == "company"}  # fmt: skip
    rows = await connector.rpc(cred, "company.company.search_read", [["id", "in", sorted(mine)]],
                               0, None, [["id", "ASC"]], ["rec_name"])  # fmt: skip
    out = [(int(r["id"]), str(r["rec_name"])) for r in rows]
    if wanted:
        names = {str(w).lower() for w in (wanted if isinstance(wanted, list) else [wanted])}
        out = [c for c in out if c[1].lower() in names or str(c[0]) in names]
    return out


async def run(
    connector: Tryton, cred: Credential, report: str, params: Mapping[str, Any]
) -> ReportResult:
    if report not in _MODELS:
        raise CatalogError(f"the tryton connector has no report {report!r}")
    if report == "general_ledger":
        return await _ledger(connector, cred, params)
    return await _aged(connector, cred, report, params)


async def _aged(
    connector: Tryton, cred: Credential, report: str, params: Mapping[str, Any]
) -> ReportResult:
    kind = "customer" if report == "accounts_receivable" else "supplier"
    ranges = [int(r) for r in (params.get("ageing_ranges") or [30, 60, 90])][:3]
    while len(ranges) < 3:
        ranges.append(ranges[-1] + 30 if ranges else 30)
    as_of = coerce("date", params.get("as_of_date") or dt.date.today().isoformat())
    parties = params.get("customer") or params.get("supplier") or []
    rows: list[dict[str, Any]] = []
    for company_id, company in await _companies(connector, cred, params.get("company")):
        context = {"type": kind, "date": as_of, "company": company_id, "unit": "day",
                   "term1": ranges[0], "term2": ranges[1], "term3": ranges[2]}  # fmt: skip
        domain = [("party.rec_name", "in", list(parties))] if parties else []
        got = await connector.rpc(
            cred, "account.aged_balance.search_read", domain, 0, None, [["balance", "DESC"]],
            ["party.rec_name", "currency.code", "term0", "term1", "term2", "term3", "balance"],
            context=context,
        )  # fmt: skip
        for r in got:
            if not r.get("balance"):
                continue
            rows.append({
                "party": (r.get("party.") or {}).get("rec_name"), "company": company,
                "currency": (r.get("currency.") or {}).get("code"),
                "outstanding": plain(r.get("balance")),
                f"range_0_{ranges[0]}": plain(r.get("term0")),
                f"range_{ranges[0] + 1}_{ranges[1]}": plain(r.get("term1")),
                f"range_{ranges[1] + 1}_{ranges[2]}": plain(r.get("term2")),
                f"range_above_{ranges[2]}": plain(r.get("term3")),
            })  # fmt: skip
    rows.sort(key=lambda r: -(r["outstanding"] or 0))
    columns = [{"fieldname": "party", "label": "Party", "fieldtype": "Link"},
               {"fieldname": "company", "label": "Company", "fieldtype": "Link"},
               {"fieldname": "currency", "label": "Currency", "fieldtype": "Data"},
               {"fieldname": "outstanding", "label": "Balance", "fieldtype": "Currency"}]  # fmt: skip
    for key in list(rows[0])[4:] if rows else []:
        columns.append({"fieldname": key, "label": key.replace("_", " "), "fieldtype": "Currency"})
    message = (f"Tryton's aged balance (account.aged_balance) as of {as_of}, by party, posted "
               "moves not reconciled; terms by maturity date (or move date).")  # fmt: skip
    return ReportResult(report, columns, rows, message=message)


async def _ledger(connector: Tryton, cred: Credential, params: Mapping[str, Any]) -> ReportResult:
    start = coerce(
        "date", params.get("from_date") or dt.date(dt.date.today().year, 1, 1).isoformat()
    )
    end = coerce("date", params.get("to_date") or dt.date.today().isoformat())
    accounts = params.get("account") or []
    rows: list[dict[str, Any]] = []
    for company_id, company in await _companies(connector, cred, params.get("company")):
        context = {"company": company_id, "from_date": start, "to_date": end, "posted": True}
        domain: list[Any] = [("account.rec_name", "in", list(accounts))] if accounts else []
        got = await connector.rpc(
            cred, "account.general_ledger.account.search_read", domain, 0, None, None,
            ["account.rec_name", "start_balance", "debit", "credit", "end_balance"],
            context=context,
        )  # fmt: skip
        for r in got:
            if not (r.get("debit") or r.get("credit") or r.get("start_balance")):
                continue
            rows.append({
                "account": (r.get("account.") or {}).get("rec_name"), "company": company,
                "opening": plain(r.get("start_balance")), "debit": plain(r.get("debit")),
                "credit": plain(r.get("credit")), "balance": plain(r.get("end_balance")),
            })  # fmt: skip
    columns = [{"fieldname": f, "label": f.title(), "fieldtype": t} for f, t in
               [("account", "Link"), ("company", "Link"), ("opening", "Currency"),
                ("debit", "Currency"), ("credit", "Currency"), ("balance", "Currency")]]  # fmt: skip
    message = (f"Tryton's general ledger (account.general_ledger.account), posted moves from "
               f"{start} to {end}, one row per account.")  # fmt: skip
    return ReportResult("general_ledger", columns, rows, message=message)
