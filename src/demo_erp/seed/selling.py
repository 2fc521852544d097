"""Quotations, sales orders, deliveries, invoices, credit notes and customer payments."""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass
from typing import Any

from demo_erp.seed.base import BranchInfo, CompanyInfo, Seeder, month_end, round2, workdays
from demo_erp.seed.masters import ItemInfo, PartyInfo, price
from demo_erp.seed.stock import book, pick_items, sale_qty

# Share of invoices per company (the rest goes to the other one).
COMPANY_SHARE = {"Savanna Trading Ltd": 0.65, "Harbor Goods Inc": 0.35}
# Chance that an invoice stays unpaid, by how many days it is past due (ageing buckets).
UNPAID_BY_AGE = ((30, 0.35), (60, 0.2), (90, 0.14), (120, 0.12))
UNPAID_OLD = 0.025
# Customers that demos ask about: they pay late more often.
SLOW_PAYERS = {"Gulf Traders": 3.0, "Lakeside Hardware": 2.0}
MODES = {
    "KES": (("M-Pesa", "Wire Transfer", "Cheque", "Cash"), (35, 30, 20, 15)),
    "USD": (("Wire Transfer", "Cheque", "Credit Card", "Cash"), (50, 25, 20, 5)),
}


@dataclass
class Line:
    item: ItemInfo
    qty: float
    rate: float


def setup(s: Seeder) -> None:
    """Customers per branch with cumulative weights, for fast weighted picks."""
    s.data["company_share"] = COMPANY_SHARE
    by_branch: dict[str, tuple[list[PartyInfo], list[float]]] = {}
    for branch in s.branches:
        parties = [c for c in s.data["customers"] if c.branch == branch]
        by_branch[branch] = (parties, list(itertools.accumulate(c.weight for c in parties)))
    s.data["customers_by_branch"] = by_branch


def _unpaid_chance(overdue_days: int) -> float:
    if overdue_days < 0:
        return 0.8  # Not due yet: most customers wait for the due date.
    for limit, chance in UNPAID_BY_AGE:
        if overdue_days <= limit:
            return chance
    return UNPAID_OLD


def run_month(s: Seeder, month: dt.date, index: int, months: int) -> None:
    last = min(month_end(month), s.today)
    days = workdays(month, last) or [last]
    full = len(workdays(month, month_end(month)))
    trend = 0.75 + 0.5 * index / max(1, months - 1)
    season = {11: 1.15, 12: 1.25, 1: 0.85, 2: 0.9}.get(month.month, 1.0)
    target = s.data["invoices_per_month"] * trend * season * len(days) / full
    plans: list[tuple[dt.date, int, BranchInfo]] = []
    seq = 0
    for branch in s.branches.values():
        count = round(
            target * COMPANY_SHARE[branch.company] * branch.weight * s.rng.uniform(0.9, 1.1)
        )
        for _ in range(count):
            seq += 1
            plans.append((s.pick(days), seq, branch))
    plans.sort(key=lambda p: (p[0], p[1]))
    for day, _, branch in plans:
        _sale(s, day, branch)
    for _ in range(round(s.data["invoices_per_month"] * 0.12 * len(days) / full)):
        _lost_quotation(s, s.pick(days))


def _customer(s: Seeder, branch: BranchInfo) -> PartyInfo:
    parties, weights = s.data["customers_by_branch"][branch.name]
    party: PartyInfo = s.rng.choices(parties, cum_weights=weights, k=1)[0]
    return party


def _lines(s: Seeder, branch: BranchInfo, company: CompanyInfo, party: PartyInfo) -> list[Line]:
    stock = book(s)
    discount = 0.05 if party.group in ("Wholesale", "Contractors") else 0.0
    out = []
    for item in pick_items(s, branch.warehouse, s.weighted((1, 2, 3, 4, 5), (3, 4, 3, 2, 1))):
        qty = stock.take((item.code, branch.warehouse), sale_qty(s, item, company.currency))
        if qty:
            rate = price(company, item.usd_rate)
            if discount and s.rng.random() < 0.5:
                rate = round2(rate * (1 - discount))
            out.append(Line(item, qty, rate))
    return out


def _totals(lines: list[Line], company: CompanyInfo) -> float:
    net = round2(sum(round2(line.qty * line.rate) for line in lines))
    return round2(net + round2(net * company.tax_rate / 100))


def _common(branch: BranchInfo, company: CompanyInfo, party: PartyInfo) -> dict[str, Any]:
    return {
        "customer": party.name,
        "company": company.name,
        "currency": company.currency,
        "territory": branch.territory,
        "branch": branch.name,
    }


def _sale(s: Seeder, day: dt.date, branch: BranchInfo) -> None:
    company = s.companies[branch.company]
    party = _customer(s, branch)
    lines = _lines(s, branch, company, party)
    if not lines:
        return
    stock = book(s)
    recent = (s.today - day).days
    order_name = None
    if s.rng.random() < 0.45:
        order_day = max(s.start, day - s.days(0, 6))
        if s.rng.random() < 0.3:
            _quotation(
                s,
                company,
                branch,
                "Customer",
                party.name,
                lines,
                max(s.start, order_day - s.days(2, 10)),
                "Ordered",
            )
        order = s.insert(
            "Sales Order",
            {
                **_common(branch, company, party),
                "transaction_date": order_day,
                "delivery_date": day,
                "order_type": "Sales",
                "po_no": f"PO-{s.rng.randint(10000, 99999)}" if s.rng.random() < 0.4 else None,
                "set_warehouse": branch.warehouse,
                "items": [
                    {
                        "item_code": ln.item.code,
                        "qty": ln.qty,
                        "rate": ln.rate,
                        "uom": ln.item.uom,
                        "warehouse": branch.warehouse,
                        "delivery_date": day,
                    }
                    for ln in lines
                ],
                "docstatus": 0 if recent <= 3 and s.rng.random() < 0.3 else 1,
            },
            on=order_day,
        )
        order_name = order["name"]
        if order["docstatus"] == 0 or (recent <= 10 and s.rng.random() < 0.5):
            # Not delivered yet: the goods are still on the shelf.
            for ln in lines:
                stock.available[(ln.item.code, branch.warehouse)] += ln.qty
            return
    # Invoices raised in error are cancelled (and not delivered), as they are in any ledger.
    cancelled = order_name is None and s.rng.random() < 0.025
    delivery_name = None
    if not cancelled:
        delivery = s.insert(
            "Delivery Note",
            {
                **_common(branch, company, party),
                "posting_date": day,
                "posting_time": f"{s.rng.randint(8, 17):02d}:{s.rng.randint(0, 59):02d}:00",
                "set_warehouse": branch.warehouse,
                "items": [
                    {
                        "item_code": ln.item.code,
                        "qty": ln.qty,
                        "rate": ln.rate,
                        "uom": ln.item.uom,
                        "warehouse": branch.warehouse,
                        "against_sales_order": order_name,
                    }
                    for ln in lines
                ],
                "docstatus": 1,
            },
            on=day,
        )
        delivery_name = delivery["name"]
    invoice_day = day + s.days(0, 2)
    if invoice_day > s.today:
        return  # Delivered, not billed yet.
    _invoice(s, invoice_day, branch, company, party, lines, order_name, delivery_name, cancelled)


def _invoice(
    s: Seeder,
    day: dt.date,
    branch: BranchInfo,
    company: CompanyInfo,
    party: PartyInfo,
    lines: list[Line],
    order: str | None,
    delivery: str | None,
    cancelled: bool,
) -> None:
    items: list[dict[str, Any]] = [
        {
            "item_code": ln.item.code,
            "qty": ln.qty,
            "rate": ln.rate,
            "uom": ln.item.uom,
            "warehouse": branch.warehouse,
            "income_account": company.acc("Sales"),
            "cost_center": branch.cost_center,
            "sales_order": order,
            "delivery_note": delivery,
        }
        for ln in lines
    ]
    charged = list(lines)
    if s.rng.random() < 0.1:
        service = next(i for i in s.data["items"] if i.code == "SVC-DELIVERY")
        fee = Line(service, 1.0, price(company, service.usd_rate))
        charged.append(fee)
        items.append(
            {
                "item_code": service.code,
                "qty": 1,
                "rate": fee.rate,
                "uom": service.uom,
                "income_account": company.acc("Sales"),
                "cost_center": branch.cost_center,
            }
        )
    # Every third invoice of the last ten days is a draft still being checked before it is
    # submitted (counted, not drawn, so every scale has some).
    draft = False
    if (s.today - day).days <= 10:
        s.counts["_recent_invoices"] += 1
        draft = s.counts["_recent_invoices"] % 3 == 1
    due = day + dt.timedelta(days=party.terms)
    invoice = s.insert(
        "Sales Invoice",
        {
            **_common(branch, company, party),
            "posting_date": day,
            "due_date": due,
            "conversion_rate": 1,
            "selling_price_list": f"Standard Selling {company.currency}",
            "debit_to": company.acc("Debtors"),
            "customer_group": party.group,
            "cost_center": branch.cost_center,
            "items": items,
            "docstatus": 0 if draft else 1,
        },
        on=day,
    )
    s.counts["_invoices"] += 1
    if draft:
        return
    if cancelled:
        s.cancel("Sales Invoice", invoice["name"], on=min(s.today, day + s.days(0, 3)))
        return
    grand = float(invoice.get("grand_total") or 0) or _totals(charged, company)
    if s.rng.random() < 0.015 and len(lines) > 0:
        _credit_note(s, invoice, branch, company, party, lines, day)
    _maybe_pay(s, invoice["name"], grand, day, due, branch, company, party)


def _credit_note(
    s: Seeder,
    invoice: dict[str, Any],
    branch: BranchInfo,
    company: CompanyInfo,
    party: PartyInfo,
    lines: list[Line],
    day: dt.date,
) -> None:
    on = min(s.today, day + s.days(3, 30))
    returned = lines[: max(1, len(lines) // 2)]
    s.insert(
        "Sales Invoice",
        {
            **_common(branch, company, party),
            "posting_date": on,
            "due_date": on,
            "is_return": 1,
            "return_against": invoice["name"],
            "conversion_rate": 1,
            "selling_price_list": f"Standard Selling {company.currency}",
            "debit_to": company.acc("Debtors"),
            "customer_group": party.group,
            "cost_center": branch.cost_center,
            "remarks": "Goods returned damaged",
            "items": [
                {
                    "item_code": ln.item.code,
                    "qty": -max(1.0, float(int(ln.qty // 2))),
                    "rate": ln.rate,
                    "uom": ln.item.uom,
                    "warehouse": branch.warehouse,
                    "income_account": company.acc("Sales"),
                    "cost_center": branch.cost_center,
                }
                for ln in returned
            ],
            "docstatus": 1,
        },
        on=on,
    )


def _outstanding(s: Seeder, doctype: str, name: str, fallback: float) -> float:
    row = s.conn.execute(
        f'select outstanding_amount, grand_total from "tab{doctype}" where name = ?', (name,)
    ).fetchone()
    if row is None or not row["grand_total"]:
        return fallback  # No controllers: nothing computed the totals.
    return float(row["outstanding_amount"] or 0)


def _maybe_pay(
    s: Seeder,
    invoice: str,
    grand: float,
    day: dt.date,
    due: dt.date,
    branch: BranchInfo,
    company: CompanyInfo,
    party: PartyInfo,
) -> None:
    overdue = (s.today - due).days
    unpaid = min(0.95, _unpaid_chance(overdue) * SLOW_PAYERS.get(party.name, 1.0))
    outstanding = _outstanding(s, "Sales Invoice", invoice, grand)
    if outstanding <= 0:
        return
    if s.rng.random() < unpaid:
        if s.rng.random() < 0.3 and (s.today - day).days > 3:
            amount = round2(outstanding * s.rng.uniform(0.3, 0.7))
            paid_on = day + s.days(1, min(party.terms, (s.today - day).days))
            receive_payment(s, invoice, amount, outstanding, paid_on, due, branch, company, party)
        return
    if overdue < 0:
        paid_on = day + s.days(0, max(0, (s.today - day).days))
    else:
        paid_on = min(
            s.today, day + dt.timedelta(days=round(party.terms * s.rng.uniform(0.6, 1.3)))
        )
    receive_payment(s, invoice, outstanding, outstanding, paid_on, due, branch, company, party)


def receive_payment(
    s: Seeder,
    invoice: str,
    amount: float,
    outstanding: float,
    day: dt.date,
    due: dt.date,
    branch: BranchInfo,
    company: CompanyInfo,
    party: PartyInfo,
) -> None:
    modes, weights = MODES[company.currency]
    mode = s.weighted(modes, weights)
    s.insert(
        "Payment Entry",
        {
            "payment_type": "Receive",
            "posting_date": day,
            "company": company.name,
            "mode_of_payment": mode,
            "party_type": "Customer",
            "party": party.name,
            "paid_from": company.acc("Debtors"),
            "paid_to": company.acc("Cash" if mode == "Cash" else "Bank"),
            "paid_from_account_currency": company.currency,
            "paid_to_account_currency": company.currency,
            "paid_amount": amount,
            "received_amount": amount,
            "reference_no": f"{mode[:3].upper()}-{s.rng.randint(100000, 999999)}",
            "reference_date": day,
            "branch": branch.name,
            "references": [
                {
                    "reference_doctype": "Sales Invoice",
                    "reference_name": invoice,
                    "due_date": due,
                    "total_amount": outstanding,
                    "outstanding_amount": outstanding,
                    "allocated_amount": amount,
                }
            ],
            "docstatus": 1,
        },
        on=day,
    )


def _quotation(
    s: Seeder,
    company: CompanyInfo,
    branch: BranchInfo,
    to: str,
    party: str,
    lines: list[Line],
    day: dt.date,
    status: str,
    docstatus: int = 1,
) -> None:
    doc = s.insert(
        "Quotation",
        {
            "quotation_to": to,
            "party_name": party,
            "company": company.name,
            "transaction_date": day,
            "valid_till": day + dt.timedelta(days=30),
            "order_type": "Sales",
            "currency": company.currency,
            "territory": branch.territory,
            "branch": branch.name,
            "status": status,
            "items": [
                {"item_code": ln.item.code, "qty": ln.qty, "rate": ln.rate, "uom": ln.item.uom}
                for ln in lines
            ],
            "docstatus": docstatus,
        },
        on=day,
    )
    if docstatus == 1 and doc.get("status") != status:
        # What ERPNext sets later (ordering it, declaring it lost, the expiry job).
        s.set_values("Quotation", doc["name"], {"status": status})


def _lost_quotation(s: Seeder, day: dt.date) -> None:
    """Quotations that did not (or not yet) turn into orders, to customers and to leads."""
    branch = s.weighted(
        list(s.branches.values()),
        [b.weight * COMPANY_SHARE[b.company] for b in s.branches.values()],
    )
    company = s.companies[branch.company]
    leads = s.data.get("leads_by_branch", {}).get(branch.name) or []
    if leads and s.rng.random() < 0.3:
        to, party = "Lead", s.pick(leads)
    else:
        to, party = "Customer", _customer(s, branch).name
    items = pick_items(s, branch.warehouse, s.rng.randint(1, 4))
    lines = [
        Line(i, float(sale_qty(s, i, company.currency)), price(company, i.usd_rate)) for i in items
    ]
    if not lines:
        return
    open_ = (s.today - day).days <= 30
    status = "Open" if open_ else s.weighted(("Lost", "Expired"), (2, 3))
    docstatus = 0 if open_ and s.rng.random() < 0.25 else 1
    _quotation(
        s, company, branch, to, party, lines, day, "Draft" if docstatus == 0 else status, docstatus
    )


def freeze_bad_payers(s: Seeder) -> None:
    """Credit control froze the accounts of the two customers longest in arrears."""
    rows = s.conn.execute(
        'select customer, min(due_date) as oldest from "tabSales Invoice" '
        "where docstatus = 1 and outstanding_amount > 0 and due_date < ? "
        "group by customer order by oldest, customer limit 2",
        ((s.today - dt.timedelta(days=120)).isoformat(),),
    ).fetchall()
    s.at(s.today)
    for row in rows:
        s.set_values("Customer", row["customer"], {"is_frozen": 1})
