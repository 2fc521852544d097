"""ERPNext's whitelisted helpers the Payment Entry form calls to fill a new payment: the
party's receivable or payable account (``payment_entry.get_party_details``) and the bank or
cash account money goes through (``journal_entry.get_default_bank_cash_account``).

Read as the user: the party must be one they can read. The demo keeps no Party Account rows
and no Mode of Payment Account rows, so a party's account is the company's default receivable
or payable account (as ERPNext falls back to), and a mode of payment of type Cash goes through
the company's default cash account, any other through its default bank account.
"""

from __future__ import annotations

from typing import Any

from demo_erp import documents, records
from demo_erp.api.erpnext_methods import get_balance_on
from demo_erp.api.methods import Args, _required, whitelist
from demo_erp.context import Ctx
from demo_erp.controllers.common import get_company
from demo_erp.exceptions import ValidationError

_PARTY_ACCOUNT = {
    "Customer": "default_receivable_account",
    "Supplier": "default_payable_account",
    "Employee": "default_payable_account",
}


def _account(ctx: Ctx, name: str | None) -> dict[str, Any]:
    return documents.get(ctx, "Account", name) if name else {}


@whitelist("erpnext.accounts.doctype.payment_entry.payment_entry.get_party_details")
def get_party_details(ctx: Ctx, args: Args) -> dict[str, Any]:
    company = str(_required(args, "company"))
    party_type = str(_required(args, "party_type"))
    party = str(_required(args, "party"))
    if party_type not in _PARTY_ACCOUNT:
        raise ValidationError(f"Invalid Party Type: {party_type}")
    if not records.exists(ctx, party_type, party):
        raise ValidationError(f"Invalid {party_type}: {party}")
    record = documents.get(ctx, party_type, party)
    party_account = get_company(ctx, company).get(_PARTY_ACCOUNT[party_type])
    account = _account(ctx, party_account)
    name_field = "employee_name" if party_type == "Employee" else f"{party_type.lower()}_name"
    balance_args = {"party_type": party_type, "party": party, "company": company}
    return {
        "party_account": party_account,
        "party_name": record.get(name_field) or party,
        "party_account_currency": account.get("account_currency"),
        "party_balance": get_balance_on(ctx, {**balance_args, "date": args.get("date")}),
        "account_balance": get_balance_on(ctx, {"account": party_account, "date": args.get("date")})
        if party_account
        else 0.0,
        "bank_account": None,
    }


@whitelist("erpnext.accounts.doctype.journal_entry.journal_entry.get_default_bank_cash_account")
def get_default_bank_cash_account(ctx: Ctx, args: Args) -> dict[str, Any]:
    company = get_company(ctx, str(_required(args, "company")))
    account_type = args.get("account_type")
    mode = args.get("mode_of_payment")
    name = args.get("account")
    if not name and mode:
        kind = documents.get(ctx, "Mode of Payment", str(mode)).get("type")
        name = company.get("default_cash_account" if kind == "Cash" else "default_bank_account")
    if not name and account_type in ("Bank", "Cash"):
        name = company.get(f"default_{str(account_type).lower()}_account")
    if not name:
        return {}
    account = _account(ctx, str(name))
    return {
        "account": account.get("name"),
        "balance": get_balance_on(ctx, {"account": account.get("name")}),
        "account_currency": account.get("account_currency"),
        "account_type": account.get("account_type"),
    }
