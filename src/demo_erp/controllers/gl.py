"""General ledger posting (ERPNext's ``erpnext/accounts/general_ledger.py``, simplified).

Entries are merged per account/party/against-voucher, negative amounts are flipped to the other
side, debits must equal credits, and each row gets the document's fiscal year, company, branch
and remarks. Cancelling marks the originals ``is_cancelled=1`` and posts reversing rows, also
with ``is_cancelled=1``, as ERPNext does since v13.
"""

from __future__ import annotations

from typing import Any

from demo_erp.context import Ctx
from demo_erp.controllers import Doc
from demo_erp.controllers.common import (
    closed_period,
    flt,
    get_company,
    get_fiscal_year,
    ledger_columns,
    reserve_series,
)
from demo_erp.exceptions import ClosedAccountingPeriod, ValidationError
from demo_erp.meta import get_meta

GLRow = dict[str, Any]
_MERGE_KEYS = (
    "account",
    "party_type",
    "party",
    "cost_center",
    "against_voucher_type",
    "against_voucher",
)


def gl_row(
    account: str | None,
    debit: float = 0.0,
    credit: float = 0.0,
    *,
    party_type: str | None = None,
    party: str | None = None,
    against_voucher_type: str | None = None,
    against_voucher: str | None = None,
    cost_center: str | None = None,
) -> GLRow:
    return {
        "account": account,
        "debit": flt(debit),
        "credit": flt(credit),
        "party_type": party_type if party else None,
        "party": party or None,
        "against_voucher_type": against_voucher_type if against_voucher else None,
        "against_voucher": against_voucher or None,
        "cost_center": cost_center,
    }


def _merge(entries: list[GLRow]) -> list[GLRow]:
    merged: dict[tuple[Any, ...], GLRow] = {}
    for entry in entries:
        key = tuple(entry.get(k) for k in _MERGE_KEYS)
        if key in merged:
            merged[key]["debit"] += entry["debit"]
            merged[key]["credit"] += entry["credit"]
        else:
            merged[key] = dict(entry)
    out = []
    for entry in merged.values():
        net = flt(entry["debit"] - entry["credit"])
        # One side per row; a negative debit is a credit (ERPNext's toggle_debit_credit_if_negative).
        entry["debit"], entry["credit"] = (net, 0.0) if net >= 0 else (0.0, -net)
        if entry["debit"] or entry["credit"]:
            out.append(entry)
    return out


def _against(entries: list[GLRow], entry: GLRow) -> str:
    side = "credit" if entry["debit"] else "debit"
    seen: list[str] = []
    for other in entries:
        if other[side]:
            label = other.get("party") or other["account"]
            if label not in seen:
                seen.append(label)
    return ", ".join(seen)


def _insert(ctx: Ctx, rows: list[GLRow]) -> None:
    meta = get_meta("GL Entry")
    assert meta is not None
    columns = [c for c in meta.column_names if c in rows[0]]
    sql = (
        f'insert into "tabGL Entry" ({", ".join(chr(34) + c + chr(34) for c in columns)}) '
        f"values ({', '.join('?' for _ in columns)})"
    )
    ctx.conn.executemany(sql, [[row.get(c) for c in columns] for row in rows])


def make_gl_entries(ctx: Ctx, doc: Doc, entries: list[GLRow]) -> None:
    """Post ``entries`` (see ``gl_row``) for the submitted ``doc``.

    A company without a chart of accounts (no default receivable account) keeps no books:
    nothing is posted, so masters-only test data can still submit documents.
    """
    company = get_company(ctx, doc.get("company"))
    if not company.get("default_receivable_account"):
        return
    if any(not e.get("account") for e in entries):
        raise ValidationError(
            f"Account is mandatory to post a GL Entry; check the defaults of Company {company['name']}"
        )
    entries = _merge(entries)
    if not entries:
        return
    total_debit = flt(sum(e["debit"] for e in entries))
    total_credit = flt(sum(e["credit"] for e in entries))
    if abs(total_debit - total_credit) >= 0.005:
        raise ValidationError(
            f"Debit and Credit not equal for {doc['doctype']} #{doc['name']}. "
            f"Difference is {flt(total_debit - total_credit)}."
        )
    posting_date = str(doc.get("posting_date"))[:10]
    fiscal_year = get_fiscal_year(ctx, posting_date)
    now = ctx.now()
    currency = company.get("default_currency")
    remarks = doc.get("remarks") or doc.get("user_remark") or "No Remarks"
    is_opening = "Yes" if doc.get("voucher_type") == "Opening Entry" else "No"
    names = reserve_series(ctx, f"ACC-GLE-{posting_date[:4]}-", len(entries))
    rows = []
    for name, entry in zip(names, entries, strict=True):
        rows.append(
            {
                **ledger_columns(ctx, name, now),
                "posting_date": posting_date,
                "account": entry["account"],
                "party_type": entry.get("party_type"),
                "party": entry.get("party"),
                "cost_center": entry.get("cost_center") or company.get("cost_center"),
                "debit": entry["debit"],
                "credit": entry["credit"],
                "account_currency": currency,
                "debit_in_account_currency": entry["debit"],
                "credit_in_account_currency": entry["credit"],
                "against": _against(entries, entry),
                "voucher_type": doc["doctype"],
                "voucher_no": doc["name"],
                "against_voucher_type": entry.get("against_voucher_type"),
                "against_voucher": entry.get("against_voucher"),
                "fiscal_year": fiscal_year,
                "company": doc.get("company"),
                "is_opening": is_opening,
                "is_cancelled": 0,
                "remarks": remarks,
                "branch": doc.get("branch"),
            }
        )
    _insert(ctx, rows)


def cancel_gl_entries(ctx: Ctx, doc: Doc) -> None:
    """Mark the voucher's entries cancelled and post reversing entries (also cancelled)."""
    rows = ctx.conn.execute(
        'select * from "tabGL Entry" where voucher_type = ? and voucher_no = ? and is_cancelled = 0',
        (doc["doctype"], doc["name"]),
    ).fetchall()
    if not rows:
        return
    period = closed_period(ctx, doc.get("company"), doc["doctype"], rows[0]["posting_date"])
    if period:
        raise ClosedAccountingPeriod(
            "You cannot create or cancel any accounting entries with in the closed Accounting "
            f"Period <strong>{period}</strong>"
        )
    now = ctx.now()
    ctx.conn.execute(
        'update "tabGL Entry" set is_cancelled = 1, modified = ?, modified_by = ? '
        "where voucher_type = ? and voucher_no = ? and is_cancelled = 0",
        (now, ctx.user, doc["doctype"], doc["name"]),
    )
    reversed_rows = []
    for row in rows:
        new = dict(row)
        new.update(
            name=reserve_series(ctx, f"ACC-GLE-{str(row['posting_date'])[:4]}-", 1)[0],
            owner=ctx.user,
            creation=now,
            modified=now,
            modified_by=ctx.user,
            debit=row["credit"],
            credit=row["debit"],
            debit_in_account_currency=row["credit_in_account_currency"],
            credit_in_account_currency=row["debit_in_account_currency"],
            is_cancelled=1,
            remarks=f"On cancellation of {doc['name']}",
        )
        reversed_rows.append(new)
    _insert(ctx, reversed_rows)
