"""Purchase orders (with the approval workflow), receipts, supplier invoices and payments."""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
import math
import random
from collections import defaultdict
from typing import Any

from demo_erp import documents
from demo_erp.seed.base import BranchInfo, CompanyInfo, Seeder, chunks, round2, workdays
from demo_erp.seed.masters import MAIN_SUPPLIERS, ItemInfo, PartyInfo, price
from demo_erp.seed.stock import book

MODES = {"KES": ("Wire Transfer", "Cheque", "M-Pesa"), "USD": ("Wire Transfer", "Cheque")}


def setup(s: Seeder) -> None:
    """Each item gets a usual supplier per company; a few suppliers carry most of the range."""
    suppliers: dict[str, list[PartyInfo]] = defaultdict(list)
    for party in s.data["suppliers"]:
        suppliers[party.company].append(party)
    usual: dict[tuple[str, str], PartyInfo] = {}
    for company, parties in suppliers.items():
        # A few main suppliers carry the range; the others only appear in the masters.
        weights = [
            1.0 / (rank + 1) if rank < MAIN_SUPPLIERS else 0.0 for rank in range(len(parties))
        ]
        for item in s.data["items"]:
            if item.is_stock:
                usual[(item.code, company)] = s.rng.choices(parties, weights=weights, k=1)[0]
    s.data["usual_supplier"] = usual
    s.data["workflow"] = _ensure_workflow(s)


def _ensure_workflow(s: Seeder) -> bool:
    """The Purchase Order approval workflow, when the workflow module provides it."""
    if importlib.util.find_spec("demo_erp.workflow") is None:
        return False
    module: Any = importlib.import_module("demo_erp.workflow")
    ensure = getattr(module, "ensure_purchase_order_workflow", None)
    if ensure is None:
        return False
    ensure(s.ctx)
    return True


# Workflow states a draft order passes through to reach the key.
_PATH = {
    "Draft": (),
    "Pending Approval": ("Pending Approval",),
    "Rejected": ("Pending Approval", "Rejected"),
}


def _hold_in_workflow(s: Seeder, name: str, state: str) -> None:
    if s.data["workflow"]:
        for step in _PATH[state]:
            documents.save(
                s.ctx, "Purchase Order", name, {"workflow_state": step}, ignore_permissions=True
            )
    s.conn.execute(
        'update "tabPurchase Order" set owner = ?, modified_by = ? where name = ?',
        (
            "purchase@demo.local",
            "purchase.manager@demo.local" if state == "Rejected" else "purchase@demo.local",
            name,
        ),
    )


def run_month(s: Seeder, month: dt.date, is_last: bool) -> None:
    """Reorder what runs low in every branch warehouse, one order per usual supplier."""
    stock = book(s)
    days = [d for d in workdays(month, month + dt.timedelta(days=6)) if d <= s.today]
    if is_last:
        # This month's orders are recent: some still wait for approval or delivery.
        days = workdays(max(month, s.today - dt.timedelta(days=18)), s.today) or days
    if not days:
        return
    for branch in s.branches.values():
        company = s.companies[branch.company]
        needs: dict[str, list[tuple[ItemInfo, float]]] = defaultdict(list)
        for item in stock.assortment[branch.warehouse]:
            key = (item.code, branch.warehouse)
            demand = stock.last_sold.get(key, 0.0)
            available = stock.available[key]
            if available >= item.reorder_level + demand:
                continue
            # About three months of demand per order.
            qty = max(item.reorder_qty, demand * 3 + item.reorder_level - available)
            qty = float(math.ceil(qty / 5) * 5)
            supplier = s.data["usual_supplier"][(item.code, company.name)].name
            needs[supplier].append((item, qty))
        for supplier in sorted(needs):
            for lines in chunks(needs[supplier], 25):
                _purchase(s, s.pick(days), branch, company, supplier, list(lines), is_last)


def _purchase(
    s: Seeder,
    day: dt.date,
    branch: BranchInfo,
    company: CompanyInfo,
    supplier: str,
    lines: list[tuple[ItemInfo, float]],
    is_last: bool,
) -> None:
    party = next(p for p in s.data["suppliers"] if p.name == supplier)
    rated = [
        (item, qty, round2(price(company, item.usd_cost) * s.rng.uniform(0.97, 1.03)))
        for item, qty in lines
    ]
    schedule = day + s.days(7, 14)
    # The newest orders wait in the approval workflow (drafted by purchase@demo.local); now and
    # then an order is rejected.
    state = "Approved"
    if is_last and (s.today - day).days <= 20:
        state = s.weighted(("Draft", "Pending Approval", "Approved"), (1, 2, 3))
    elif s.rng.random() < 0.02:
        state = "Rejected"
    data: dict[str, Any] = {
        "supplier": supplier,
        "company": company.name,
        "transaction_date": day,
        "schedule_date": schedule,
        "currency": company.currency,
        "set_warehouse": branch.warehouse,
        "branch": branch.name,
        "items": [
            {
                "item_code": item.code,
                "qty": qty,
                "rate": rate,
                "uom": item.uom,
                "warehouse": branch.warehouse,
                "schedule_date": schedule,
            }
            for item, qty, rate in rated
        ],
        # Submitting moves the workflow to its submitted state (Approved) by itself.
        "docstatus": int(state == "Approved"),
    }
    order = s.insert("Purchase Order", data, on=day)
    if state != "Approved":
        _hold_in_workflow(s, order["name"], state)
        return
    receipt_day = day + s.days(4, 12)
    if receipt_day > s.today:
        return  # Still to be received.
    stock = book(s)
    receipt = s.insert(
        "Purchase Receipt",
        {
            "supplier": supplier,
            "company": company.name,
            "posting_date": receipt_day,
            "posting_time": f"{s.rng.randint(8, 16):02d}:{s.rng.randint(0, 59):02d}:00",
            "set_warehouse": branch.warehouse,
            "currency": company.currency,
            "branch": branch.name,
            "items": [
                {
                    "item_code": item.code,
                    "qty": qty,
                    "rate": rate,
                    "uom": item.uom,
                    "warehouse": branch.warehouse,
                    "purchase_order": order["name"],
                }
                for item, qty, rate in rated
            ],
            "docstatus": 1,
        },
        on=receipt_day,
    )
    for item, qty, _ in rated:
        stock.receive((item.code, branch.warehouse), qty)
    bill_day = receipt_day + s.days(0, 6)
    if bill_day > s.today:
        return
    due = bill_day + dt.timedelta(days=party.terms)
    invoice = s.insert(
        "Purchase Invoice",
        {
            "supplier": supplier,
            "company": company.name,
            "posting_date": bill_day,
            "due_date": due,
            "bill_no": f"INV-{s.rng.randint(10000, 99999)}",
            "bill_date": bill_day - s.days(0, 2),
            "currency": company.currency,
            "conversion_rate": 1,
            "credit_to": company.acc("Creditors"),
            "cost_center": branch.cost_center,
            "branch": branch.name,
            "items": [
                {
                    "item_code": item.code,
                    "qty": qty,
                    "rate": rate,
                    "uom": item.uom,
                    "expense_account": company.acc("Stock Received But Not Billed"),
                    "cost_center": branch.cost_center,
                    "purchase_order": order["name"],
                    "purchase_receipt": receipt["name"],
                }
                for item, qty, rate in rated
            ],
            "docstatus": 1,
        },
        on=bill_day,
    )
    _maybe_pay(s, invoice, rated, bill_day, due, branch, company, party)


def _maybe_pay(
    s: Seeder,
    invoice: dict[str, Any],
    rated: list[tuple[ItemInfo, float, float]],
    day: dt.date,
    due: dt.date,
    branch: BranchInfo,
    company: CompanyInfo,
    party: PartyInfo,
) -> None:
    overdue = (s.today - due).days
    unpaid = 0.85 if overdue < 0 else 0.25 if overdue <= 30 else 0.1 if overdue <= 60 else 0.02
    if s.rng.random() < unpaid:
        return
    grand = float(invoice.get("grand_total") or 0)
    if not grand:
        net = round2(sum(round2(q * r) for _, q, r in rated))
        grand = round2(net + round2(net * company.tax_rate / 100))
    outstanding = float(invoice.get("outstanding_amount") or 0) or grand
    if overdue < 0:
        paid_on = day + s.days(0, max(0, (s.today - day).days))
    else:
        paid_on = min(s.today, max(day, due + s.days(-7, 10)))
    mode = s.pick(MODES[company.currency])
    s.insert(
        "Payment Entry",
        {
            "payment_type": "Pay",
            "posting_date": paid_on,
            "company": company.name,
            "mode_of_payment": mode,
            "party_type": "Supplier",
            "party": party.name,
            "paid_from": company.acc("Bank"),
            "paid_to": company.acc("Creditors"),
            "paid_from_account_currency": company.currency,
            "paid_to_account_currency": company.currency,
            "paid_amount": outstanding,
            "received_amount": outstanding,
            "reference_no": f"{mode[:3].upper()}-{s.rng.randint(100000, 999999)}",
            "reference_date": paid_on,
            "branch": branch.name,
            "references": [
                {
                    "reference_doctype": "Purchase Invoice",
                    "reference_name": invoice["name"],
                    "due_date": due,
                    "total_amount": grand,
                    "outstanding_amount": outstanding,
                    "allocated_amount": outstanding,
                }
            ],
            "docstatus": 1,
        },
        on=paid_on,
    )


DRAFT_STREAM = 0x0D2AF8  # mixed into the seed: the guaranteed draft order's own random stream


def ensure_draft_order(s: Seeder, seed: int) -> None:
    """One Purchase Order still in the workflow's Draft state, keyed in by purchase@ in the
    last few days, when chance left none: a demo of "why can't I submit it?" needs one. It
    draws from its own random stream, so the rest of the data set is unchanged."""
    if not s.data["workflow"]:
        return
    if s.conn.execute(
        "select 1 from `tabPurchase Order` where docstatus = 0 and workflow_state = 'Draft'"
    ).fetchone():
        return
    rng = random.Random(seed ^ DRAFT_STREAM)
    branch = s.branches[sorted(s.branches)[0]]
    company = s.companies[branch.company]
    usual = sorted(
        (code, party.name)
        for (code, owner), party in s.data["usual_supplier"].items()
        if owner == company.name
    )
    by_code = {item.code: item for item in s.data["items"]}
    supplier = usual[0][1]
    lines = [by_code[code] for code, name in usual if name == supplier][:2]
    day = s.today - dt.timedelta(days=rng.randrange(0, 3))
    schedule = day + dt.timedelta(days=10)
    s.at(day)
    order = s.insert(
        "Purchase Order",
        {
            "supplier": supplier,
            "company": company.name,
            "transaction_date": day,
            "schedule_date": schedule,
            "currency": company.currency,
            "set_warehouse": branch.warehouse,
            "branch": branch.name,
            "items": [
                {
                    "item_code": item.code,
                    "qty": float(rng.randint(2, 6) * 5),
                    "rate": round2(price(company, item.usd_cost)),
                    "uom": item.uom,
                    "warehouse": branch.warehouse,
                    "schedule_date": schedule,
                }
                for item in lines
            ],
            "docstatus": 0,
        },
        on=day,
    )
    _hold_in_workflow(s, order["name"], "Draft")
