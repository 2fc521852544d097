"""Fill a new Payment Entry the way ERPNext's payment form does, before it is proposed.

The form asks the ERP, as the user: ``payment_entry.get_party_details`` (the party's
receivable or payable account and its name) and ``journal_entry.get_default_bank_cash_account``
(the account of the mode of payment, else the company's default bank account). Money received
comes from the party's account into the bank; money paid goes from the bank to the party's
account. An account the user gave is kept; one the ERP could not give is left for the ERP to
refuse on insert, in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import EntityMap
from erp_agent.connectors.base import FilledDocument
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient

DOCTYPE = "Payment Entry"
_PARTY_DETAILS = "erpnext.accounts.doctype.payment_entry.payment_entry.get_party_details"
_BANK_ACCOUNT = "erpnext.accounts.doctype.journal_entry.journal_entry.get_default_bank_cash_account"
# Which side of the payment is the party's account: money received leaves it, paid enters it.
_PARTY_SIDE = {"Receive": "paid_from", "Pay": "paid_to"}
_BANK_SIDE = {"Receive": "paid_to", "Pay": "paid_from"}
# The party type a payment's direction implies when none is given (as the form sets it).
_DEFAULT_PARTY_TYPE = {"Receive": "Customer", "Pay": "Supplier"}


async def fill(
    client: FrappeClient, cred: Credential, emap: EntityMap, values: Mapping[str, Any]
) -> FilledDocument:
    native: dict[str, Any] = dict(emap.to_native(values))
    direction = str(native.get("payment_type") or "")
    company = native.get("company")
    party_side, bank_side = _PARTY_SIDE.get(direction), _BANK_SIDE.get(direction)
    filled: set[str] = set()
    if native.get("party") and not native.get("party_type") and direction in _DEFAULT_PARTY_TYPE:
        native["party_type"] = _DEFAULT_PARTY_TYPE[direction]
        filled.add("party_type")
    if party_side and native.get("party") and company and not native.get(party_side):
        details = await _ask(
            client, cred, _PARTY_DETAILS, company=company, party_type=native.get("party_type"),
            party=native.get("party"), date=native.get("posting_date"),
        )  # fmt: skip
        if details.get("party_account"):
            native[party_side] = details["party_account"]
            native[f"{party_side}_account_currency"] = details.get("party_account_currency")
            filled.add(party_side)
        if details.get("party_name"):
            native["party_name"] = details["party_name"]
    if bank_side and company and not native.get(bank_side):
        bank = await _ask(
            client, cred, _BANK_ACCOUNT, company=company, account_type="Bank",
            mode_of_payment=native.get("mode_of_payment"),
        )  # fmt: skip
        if bank.get("account"):
            native[bank_side] = bank["account"]
            native[f"{bank_side}_account_currency"] = bank.get("account_currency")
            filled.add(bank_side)
    if native.get("paid_amount") is not None and native.get("received_amount") is None:
        # One currency on both sides here: what leaves one account arrives in the other.
        native["received_amount"] = native["paid_amount"]
        filled.add("received_amount")
    document: dict[str, Any] = dict(emap.to_canonical(native))
    # What the ERP filled is sent on insert, so what is confirmed is what is written.
    added = emap.to_canonical({name: native[name] for name in filled})
    payload = {k: v for k, v in document.items() if k in values or k in added}
    return FilledDocument(payload=payload, document=document)


async def _ask(client: FrappeClient, cred: Credential, path: str, **args: Any) -> dict[str, Any]:
    """One of the payment form's helpers, as the user; an empty answer is no answer."""
    return dict(await client.method(cred, path, **args) or {})
