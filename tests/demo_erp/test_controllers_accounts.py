"""Invoices, payments, credit notes, journal entries, GL posting, periods and fiscal years."""

from __future__ import annotations

import pytest
from builders import World, acc, assert_balanced, make_world

from demo_erp import documents
from demo_erp.controllers.accounts import refresh_statuses
from demo_erp.exceptions import ClosedAccountingPeriod, FiscalYearError, ValidationError


@pytest.fixture
def world(empty_db) -> World:  # type: ignore[no-untyped-def]
    return make_world(empty_db[1])


def test_sales_invoice_totals_and_defaults(world: World) -> None:
    inv = world.insert(
        "Sales Invoice",
        {
            "customer": world.customer,
            "posting_date": "2026-11-01",
            "items": [
                {"item_code": world.service, "qty": 3, "rate": 33.33},
                {"item_code": world.item, "qty": 1, "rate": 10},
            ],
        },
    )
    assert inv["items"][0]["amount"] == 99.99
    assert inv["items"][0]["item_name"] == "Support Hour"
    assert inv["total_qty"] == 4
    assert inv["net_total"] == 109.99
    assert inv["total_taxes_and_charges"] == 11.0
    assert inv["grand_total"] == 120.99
    assert inv["base_grand_total"] == 120.99
    assert inv["rounded_total"] == 121
    assert inv["customer_name"] == "Acme Corp"
    assert inv["territory"] == "All Territories"
    assert inv["customer_group"] == "Commercial"
    assert inv["currency"] == "USD"
    assert inv["debit_to"] == acc("Debtors")
    assert inv["due_date"] == "2026-12-01"
    assert inv["status"] == "Draft"
    [schedule] = inv["payment_schedule"]
    assert schedule["payment_amount"] == 120.99
    assert schedule["due_date"] == "2026-12-01"


def test_submit_posts_balanced_gl_and_sets_outstanding(world: World) -> None:
    inv = world.sales_invoice(qty=2, rate=100)
    assert inv["outstanding_amount"] == 220
    assert inv["status"] == "Unpaid"  # due 2026-12-01, today is 2026-11-30
    rows = world.gl(inv["name"])
    by_account = {r["account"]: r for r in rows}
    assert by_account[acc("Debtors")]["debit"] == 220
    assert by_account[acc("Debtors")]["party_type"] == "Customer"
    assert by_account[acc("Debtors")]["party"] == world.customer
    assert by_account[acc("Debtors")]["against_voucher"] == inv["name"]
    assert by_account[acc("Debtors")]["against"] == f"{acc('Sales')}, {acc('VAT')}"
    assert by_account[acc("Sales")]["credit"] == 200
    assert by_account[acc("Sales")]["against"] == world.customer
    assert by_account[acc("VAT")]["credit"] == 20
    for row in rows:
        assert row["fiscal_year"] == "2026"
        assert row["voucher_type"] == "Sales Invoice"
        assert row["company"] == world.company
        assert row["cost_center"] == acc("Main")
        assert row["is_cancelled"] == 0
        assert row["posting_date"] == "2026-11-01"
    assert_balanced(world, inv["name"])


def test_overdue_and_refresh_statuses(world: World) -> None:
    overdue = world.sales_invoice(posting_date="2026-09-01")
    assert overdue["status"] == "Overdue"
    draft_due = world.sales_invoice(posting_date="2026-11-01", due_date="2026-11-15", submit=False)
    name = documents.submit(world.ctx, "Sales Invoice", draft_due["name"])["name"]
    assert world.load("Sales Invoice", name)["status"] == "Overdue"
    # An invoice whose due date passes after submission turns Overdue with the daily job.
    unpaid = world.sales_invoice(posting_date="2026-11-01")
    world.ctx.conn.execute(
        'update "tabSales Invoice" set due_date = ? where name = ?', ("2026-11-20", unpaid["name"])
    )
    assert refresh_statuses(world.ctx) == 1
    assert world.load("Sales Invoice", unpaid["name"])["status"] == "Overdue"


def test_payment_reduces_outstanding_and_cancel_restores(world: World) -> None:
    inv = world.sales_invoice(qty=1, rate=1000)  # grand total 1100
    before = world.load("Sales Invoice", inv["name"])["modified"]

    def pay(amount: float) -> dict:  # type: ignore[type-arg]
        return world.insert(
            "Payment Entry",
            {
                "payment_type": "Receive",
                "party_type": "Customer",
                "party": world.customer,
                "posting_date": "2026-11-10",
                "paid_amount": amount,
                "references": [
                    {
                        "reference_doctype": "Sales Invoice",
                        "reference_name": inv["name"],
                        "allocated_amount": amount,
                    }
                ],
            },
            submit=True,
        )

    first = pay(600)
    assert first["paid_from"] == acc("Debtors")
    assert first["paid_to"] == acc("Bank")
    assert first["party_name"] == "Acme Corp"
    assert first["total_allocated_amount"] == 600
    assert first["unallocated_amount"] == 0
    assert first["status"] == "Submitted"
    after = world.load("Sales Invoice", inv["name"])
    assert after["outstanding_amount"] == 500
    assert after["status"] == "Partly Paid"
    assert after["modified"] > before
    gl = {r["account"]: r for r in world.gl(first["name"])}
    assert gl[acc("Bank")]["debit"] == 600
    assert gl[acc("Debtors")]["credit"] == 600
    assert gl[acc("Debtors")]["against_voucher"] == inv["name"]
    assert gl[acc("Debtors")]["party"] == world.customer

    second = pay(500)
    assert world.load("Sales Invoice", inv["name"])["status"] == "Paid"
    assert world.load("Sales Invoice", inv["name"])["outstanding_amount"] == 0

    documents.cancel(world.ctx, "Payment Entry", second["name"])
    restored = world.load("Sales Invoice", inv["name"])
    assert restored["outstanding_amount"] == 500
    assert restored["status"] == "Partly Paid"
    assert world.load("Payment Entry", second["name"])["status"] == "Cancelled"
    assert_balanced(world, second["name"])
    assert all(r["is_cancelled"] == 1 for r in world.gl(second["name"]))


def test_over_allocation_is_refused(world: World) -> None:
    inv = world.sales_invoice(qty=1, rate=100)  # 110
    with pytest.raises(ValidationError) as err:
        world.insert(
            "Payment Entry",
            {
                "payment_type": "Receive",
                "party": world.customer,
                "posting_date": "2026-11-10",
                "paid_amount": 200,
                "references": [
                    {
                        "reference_doctype": "Sales Invoice",
                        "reference_name": inv["name"],
                        "allocated_amount": 200,
                    }
                ],
            },
        )
    assert err.value.message == (
        "Row #1: Allocated Amount cannot be greater than outstanding amount."
    )


def test_supplier_payment_against_purchase_invoice(world: World) -> None:
    pinv = world.insert(
        "Purchase Invoice",
        {
            "supplier": world.supplier,
            "posting_date": "2026-11-01",
            "items": [{"item_code": world.item, "qty": 4, "rate": 25}],
        },
        submit=True,
    )
    assert pinv["credit_to"] == acc("Creditors")
    assert pinv["supplier_name"] == "Parts Ltd"
    assert pinv["due_date"] == "2026-11-16"
    assert pinv["status"] == "Overdue"
    gl = {r["account"]: r for r in world.gl(pinv["name"])}
    assert gl[acc("Stock Received But Not Billed")]["debit"] == 100
    assert gl[acc("VAT")]["debit"] == 10
    assert gl[acc("Creditors")]["credit"] == 110
    assert gl[acc("Creditors")]["party_type"] == "Supplier"
    pay = world.insert(
        "Payment Entry",
        {
            "payment_type": "Pay",
            "party": world.supplier,
            "posting_date": "2026-11-20",
            "paid_amount": 110,
            "references": [
                {
                    "reference_doctype": "Purchase Invoice",
                    "reference_name": pinv["name"],
                    "allocated_amount": 110,
                }
            ],
        },
        submit=True,
    )
    assert pay["party_type"] == "Supplier"
    assert (pay["paid_from"], pay["paid_to"]) == (acc("Bank"), acc("Creditors"))
    assert world.load("Purchase Invoice", pinv["name"])["status"] == "Paid"
    assert_balanced(world, pay["name"])


def test_credit_note_reduces_original(world: World) -> None:
    inv = world.sales_invoice(qty=2, rate=100)  # 220
    partial = world.sales_invoice(qty=-1, rate=100, is_return=1, return_against=inv["name"])  # -110
    assert partial["grand_total"] == -110
    assert partial["outstanding_amount"] == 0
    assert partial["status"] == "Return"
    original = world.load("Sales Invoice", inv["name"])
    assert original["outstanding_amount"] == 110
    assert original["status"] == "Partly Paid"
    gl = {r["account"]: r for r in world.gl(partial["name"])}
    assert gl[acc("Debtors")]["credit"] == 110
    assert gl[acc("Debtors")]["against_voucher"] == inv["name"]
    assert gl[acc("Sales")]["debit"] == 100
    assert_balanced(world, partial["name"])

    rest = world.sales_invoice(qty=-1, rate=100, is_return=1, return_against=inv["name"])
    original = world.load("Sales Invoice", inv["name"])
    assert original["outstanding_amount"] == 0
    assert original["status"] == "Credit Note Issued"

    documents.cancel(world.ctx, "Sales Invoice", rest["name"])
    original = world.load("Sales Invoice", inv["name"])
    assert original["outstanding_amount"] == 110
    assert original["status"] == "Partly Paid"


def test_cancel_reverses_gl(world: World) -> None:
    inv = world.sales_invoice()
    cancelled = documents.cancel(world.ctx, "Sales Invoice", inv["name"])
    assert cancelled["status"] == "Cancelled"
    rows = world.gl(inv["name"])
    assert len(rows) == 6
    assert all(r["is_cancelled"] == 1 for r in rows)
    originals, reversals = rows[:3], rows[3:]
    for original, reversal in zip(originals, reversals, strict=True):
        assert (original["account"], original["debit"], original["credit"]) == (
            reversal["account"],
            reversal["credit"],
            reversal["debit"],
        )
    total = sum(r["debit"] - r["credit"] for r in rows)
    assert total == 0
    assert_balanced(world, inv["name"])


def test_gl_copies_branch(world: World) -> None:
    documents.insert(world.ctx, "Branch", {"branch": "North"}, ignore_permissions=True)
    inv = world.sales_invoice(branch="North")
    assert {r["branch"] for r in world.gl(inv["name"])} == {"North"}


def test_fiscal_year_missing(world: World) -> None:
    with pytest.raises(FiscalYearError) as err:
        world.sales_invoice(posting_date="2025-06-01")
    assert err.value.message == "2025-06-01 is not in any active Fiscal Year"
    assert err.value.exc_type == "FiscalYearError"
    assert world.ctx.conn.execute('select count(*) from "tabGL Entry"').fetchone()[0] == 0


def test_closed_accounting_period(world: World) -> None:
    documents.insert(
        world.ctx,
        "Accounting Period",
        {
            "period_name": "Oct 2026",
            "company": world.company,
            "start_date": "2026-10-01",
            "end_date": "2026-10-31",
            "closed_documents": [
                {"document_type": "Sales Invoice", "closed": 1},
                {"document_type": "Journal Entry", "closed": 0},
            ],
        },
        ignore_permissions=True,
    )
    with pytest.raises(ClosedAccountingPeriod) as err:
        world.sales_invoice(posting_date="2026-10-15", submit=False)
    assert err.value.message == (
        "You cannot create a Sales Invoice within the closed Accounting Period "
        "<strong>Oct 2026 - DC</strong>"
    )
    assert err.value.exc_type == "ClosedAccountingPeriod"
    world.sales_invoice(posting_date="2026-11-01")  # outside the period
    world.insert(
        "Journal Entry",
        {
            "posting_date": "2026-10-15",
            "accounts": [
                {"account": acc("Bank"), "debit_in_account_currency": 5},
                {"account": acc("Cash"), "credit_in_account_currency": 5},
            ],
        },
        submit=True,
    )


def test_journal_entry(world: World) -> None:
    with pytest.raises(ValidationError) as err:
        world.insert(
            "Journal Entry",
            {
                "posting_date": "2026-11-05",
                "accounts": [
                    {"account": acc("Bank"), "debit_in_account_currency": 100},
                    {"account": acc("Cash"), "credit_in_account_currency": 60},
                ],
            },
        )
    assert err.value.message == (
        "Total Debit must be equal to Total Credit. The difference is 40.0"
    )
    je = world.insert(
        "Journal Entry",
        {
            "posting_date": "2026-11-05",
            "accounts": [
                {"account": acc("Bank"), "debit_in_account_currency": 100},
                {
                    "account": acc("Debtors"),
                    "party_type": "Customer",
                    "party": world.customer,
                    "credit_in_account_currency": 100,
                },
            ],
        },
        submit=True,
    )
    assert (je["total_debit"], je["total_credit"], je["difference"]) == (100, 100, 0)
    gl = {r["account"]: r for r in world.gl(je["name"])}
    assert gl[acc("Debtors")]["party"] == world.customer
    assert gl[acc("Debtors")]["party_type"] == "Customer"
    assert gl[acc("Bank")]["debit"] == 100
    assert_balanced(world, je["name"])
