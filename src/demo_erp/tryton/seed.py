"""Seed a Tryton database through proteus, as Tryton's own forms would fill it.

Deterministic for a seed and a date: every choice comes from ``random.Random(seed)`` and every
date from ``today`` (invoices fall between 1 January and ``today`` of its year). Posting goes in
date order (Tryton numbers invoices strictly by date), and the seed answers Tryton's warnings
(back-dated due dates) with the context flag its own test tools use.

Run in its own process (``python -m demo_erp.tryton seed …``): proteus binds trytond's pool to
this process.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

PASSWORD = "demo"  # every demo user's password (the trytond.conf allows a short one)


@dataclass(frozen=True)
class CompanySpec:
    key: str  # "US" / "EU": the prefix of its invoice numbers
    name: str
    currency: str
    tax_rate: Decimal
    invoices: int


COMPANIES = (
    CompanySpec("US", "Acme US Inc.", "USD", Decimal("0.10"), 36),
    CompanySpec("EU", "Acme EU GmbH", "EUR", Decimal("0.20"), 18),
)
CUSTOMERS = (
    "Blue Harbor Ltd", "Cedar Point Foods", "Delta Mechanics", "Evergreen Clinics",
    "Falcon Logistics", "Granite Builders", "Horizon Retail", "Iris Software",
)  # fmt: skip
SUPPLIERS = ("Northwind Metals", "Orion Components", "Pioneer Packaging")
# code, name, type, list price in USD (the EU list price is 0.92 of it, rounded)
PRODUCTS = (
    ("W-100", "Widget", "goods", Decimal("40.00")),
    ("G-200", "Gadget", "goods", Decimal("125.00")),
    ("S-300", "Sprocket", "goods", Decimal("8.50")),
    ("R-400", "Gear", "goods", Decimal("62.00")),
    ("SV-10", "Installation", "service", Decimal("300.00")),
    ("SV-20", "Support Hour", "service", Decimal("90.00")),
)
# login, name, groups, companies (keys), company filter
USERS = (
    ("accountant", "Alex Accountant", ("Accounting", "Sales", "Purchase", "Stock"), ("US", "EU"), "all"),
    ("sales_us", "Sam Sales (US)", ("Sales",), ("US",), "one"),
    ("acct_eu", "Eva Accounting (EU)", ("Accounting",), ("EU",), "one"),
)  # fmt: skip


def seed(database: str, config_file: str, *, seed: int = 7, today: dt.date) -> dict[str, Any]:
    """Fill ``database`` (modules already activated); returns a summary of what was made."""
    from proteus import Model
    from proteus import config as pconfig

    config = pconfig.set_trytond(database=database, config_file=config_file)
    config.skip_warning = True  # back-dated due dates: answered as Tryton's own tests do
    rng = random.Random(seed)
    User = Model.get("res.user")
    config._context = User.get_preferences(True, {})

    made: dict[str, Any] = {"companies": {}, "users": [u[0] for u in USERS]}
    Currency = Model.get("currency.currency")
    Rate = Model.get("currency.currency.rate")
    currencies = {}
    for code, name, symbol, rate in (
        ("USD", "U.S. Dollar", "$", Decimal("1")),
        ("EUR", "Euro", "€", Decimal("0.92")),
    ):
        cur = Currency(name=name, symbol=symbol, code=code, rounding=Decimal("0.01"))
        cur.save()
        Rate(date=dt.date(today.year - 1, 1, 1), rate=rate, currency=cur).save()
        currencies[code] = cur

    Party = Model.get("party.party")
    customers = [Party(name=n) for n in CUSTOMERS]
    suppliers = [Party(name=n) for n in SUPPLIERS]
    Party.save(customers + suppliers)

    Category = Model.get("product.category")
    category = Category(name="Products", accounting=True)
    category.save()
    Uom = Model.get("product.uom")
    unit, = Uom.find([("name", "=", "Unit")])  # fmt: skip
    Template = Model.get("product.template")
    templates = []
    for code, name, kind, _price in PRODUCTS:
        tpl = Template(name=name, type=kind, default_uom=unit, salable=True, purchasable=True)
        tpl.account_category = category
        tpl.code = code
        templates.append(tpl)
    Template.save(templates)
    products = [t.products[0] for t in templates]

    Term = Model.get("account.invoice.payment_term")
    term = Term(name="Net 30")
    term.lines.new(type="remainder", relativedeltas=[])
    term.lines[0].relativedeltas.new(days=30)
    term.save()

    companies = {}
    for spec in COMPANIES:
        companies[spec.key] = _company(
            config, spec, currencies[spec.currency], category, templates, today
        )
    for spec in COMPANIES:
        _switch(config, companies[spec.key]["company"])
        made["companies"][spec.key] = _documents(
            config, spec, companies[spec.key], customers, suppliers, products, term, rng, today
        )

    _switch(config, companies["US"]["company"])
    made["stock"] = _stock(config, products)
    made["sales"] = _sales(config, customers, products, term, today)
    made["purchase"] = _purchase(config, suppliers, products, today)
    _users(config, companies)
    return made


def _switch(config: Any, company: Any) -> None:
    """Make ``company`` the admin's current one: Tryton's record rules bind the admin too."""
    from proteus import Model

    User = Model.get("res.user")
    admin = User(config.user)
    if company not in admin.companies:
        admin.companies.append(company)
    admin.company = company
    admin.save()
    config._context = User.get_preferences(True, {})


def _company(
    config: Any, spec: CompanySpec, currency: Any, category: Any, templates: list[Any],
    today: dt.date,
) -> dict[str, Any]:  # fmt: skip
    from proteus import Model, Wizard
    from trytond.modules.account.tests.tools import create_chart, get_accounts

    Party = Model.get("party.party")
    party = Party(name=spec.name)
    party.save()
    wizard = Wizard("company.company.config")
    wizard.execute("company")
    wizard.form.party = party
    wizard.form.currency = currency
    wizard.execute("add")
    Company = Model.get("company.company")
    company, = Company.find([("party", "=", party.id)])  # fmt: skip
    _switch(config, company)
    create_chart(company)
    accounts = get_accounts(company)

    Sequence = Model.get("ir.sequence.strict")
    SequenceType = Model.get("ir.sequence.type")
    FiscalYear = Model.get("account.fiscalyear")
    move_type, = SequenceType.find([("name", "=", "Account Move")], limit=1)  # fmt: skip
    invoice_type, = SequenceType.find([("name", "=", "Invoice")], limit=1)  # fmt: skip
    year = today.year
    move_seq = Sequence(name=f"{spec.key} moves {year}", sequence_type=move_type, company=company)
    move_seq.save()
    fy = FiscalYear(name=f"{spec.key} {year}", start_date=dt.date(year, 1, 1),
                    end_date=dt.date(year, 12, 31), company=company, move_sequence=move_seq)  # fmt: skip
    sequences = {}
    for kind, prefix in (("invoice", "INV"), ("credit", "CN"), ("supplier", "BILL")):
        seq = Sequence(
            name=f"{spec.key} {kind} {year}", sequence_type=invoice_type, company=company,
            prefix=f"{spec.key}-{prefix}-{year}-", padding=5,
        )  # fmt: skip
        seq.save()
        sequences[kind] = seq
    inv_seq = fy.invoice_sequences[0]
    inv_seq.out_invoice_sequence = sequences["invoice"]
    inv_seq.out_credit_note_sequence = sequences["credit"]
    inv_seq.in_invoice_sequence = sequences["supplier"]
    inv_seq.in_credit_note_sequence = sequences["supplier"]
    fy.save()
    fy.click("create_period")

    Tax = Model.get("account.tax")
    tax = Tax(name=f"{spec.key} sales tax {int(spec.tax_rate * 100)}%", type="percentage",
              rate=spec.tax_rate, invoice_account=accounts["tax"],
              credit_note_account=accounts["tax"])  # fmt: skip
    tax.description = tax.name
    tax.save()
    cat = Model.get("product.category")(category.id)
    cat.account_revenue = accounts["revenue"]
    cat.account_expense = accounts["expense"]
    cat.customer_taxes.append(Tax(tax.id))
    cat.save()
    Template = Model.get("product.template")
    for index, tpl in enumerate(templates):
        t = Template(tpl.id)
        t.list_price = _price(spec, index)
        t.cost_price_method = "fixed"
        t.save()
        product = t.products[0]
        product.cost_price = (t.list_price * Decimal("0.6")).quantize(Decimal("0.0001"))
        product.save()

    Journal = Model.get("account.journal")
    cash_journal, = Journal.find([("type", "=", "cash")], limit=1)  # fmt: skip
    Method = Model.get("account.invoice.payment.method")
    method = Method(name=f"{spec.key} cash", journal=cash_journal,
                    credit_account=accounts["cash"], debit_account=accounts["cash"])  # fmt: skip
    method.save()
    return {"company": company, "accounts": accounts, "method": method, "tax": tax}


def _price(spec: CompanySpec, index: int) -> Decimal:
    factor = Decimal("1") if spec.currency == "USD" else Decimal("0.92")
    return (PRODUCTS[index][3] * factor).quantize(Decimal("0.01"))


def _invoice_dates(rng: random.Random, count: int, today: dt.date) -> list[dt.date]:
    start = dt.date(today.year, 1, 1)
    span = max((today - start).days, 1)
    return sorted(start + dt.timedelta(days=rng.randrange(span)) for _ in range(count))


def _documents(
    config: Any, spec: CompanySpec, made: dict[str, Any], customers: list[Any],
    suppliers: list[Any], products: list[Any], term: Any, rng: random.Random, today: dt.date,
) -> dict[str, Any]:  # fmt: skip
    from proteus import Model, Wizard

    Invoice = Model.get("account.invoice")
    invoices = []
    plan = []
    for i, date in enumerate(_invoice_dates(rng, spec.invoices, today)):
        roll = rng.random()
        state = "posted" if roll < 0.6 else "cancelled" if roll < 0.72 else "draft"
        credit = i % 15 == 14
        party = customers[rng.randrange(len(customers))]
        inv = Invoice(type="out", party=party, invoice_date=date, payment_term=term)
        for _ in range(1 + rng.randrange(3)):
            line = inv.lines.new()
            pick = rng.randrange(len(products))
            line.product = products[pick]
            line.quantity = float((1 + rng.randrange(12)) * (-1 if credit else 1))
            # Tryton's invoice form leaves the price to the user (a sale fills it).
            line.unit_price = _price(spec, pick)
        inv.description = f"{spec.key} demo invoice {i + 1}"
        invoices.append(inv)
        plan.append(state)
    Invoice.save(invoices)
    for inv, state in zip(invoices, plan, strict=True):  # oldest first: strict numbering
        if state == "posted":
            inv.click("post")
        elif state == "cancelled":
            inv.click("cancel")
    posted = [inv for inv, s in zip(invoices, plan, strict=True) if s == "posted"]
    paid = 0
    for inv in posted[:3]:
        if inv.total_amount <= 0:
            continue
        pay = Wizard("account.invoice.pay", [inv])
        pay.form.payment_method = made["method"]
        pay.form.date = inv.invoice_date + dt.timedelta(days=10)
        pay.execute("choice")
        paid += 1
    bills = []
    for i, supplier in enumerate(suppliers[:2]):
        bill = Invoice(type="in", party=supplier, invoice_date=dt.date(today.year, 1, 15 + i),
                       payment_term=term, reference=f"{supplier.name[:3].upper()}-{100 + i}")  # fmt: skip
        line = bill.lines.new()
        line.product = products[i]
        line.quantity = 20.0
        line.unit_price = Decimal("20.00")
        bills.append(bill)
    Invoice.save(bills)
    bills[0].click("post")
    return {"invoices": len(invoices), "posted": len(posted), "paid": paid,
            "cancelled": plan.count("cancelled"), "draft": plan.count("draft")}  # fmt: skip


def _stock(config: Any, products: list[Any]) -> int:
    from proteus import Model

    Location = Model.get("stock.location")
    storage, = Location.find([("code", "=", "STO")])  # fmt: skip
    Inventory = Model.get("stock.inventory")
    inventory = Inventory(location=storage)
    goods = [p for p in products if p.template.type == "goods"]
    for product in goods:
        line = inventory.lines.new(product=product)
        line.quantity = 100.0
    inventory.save()
    inventory.click("confirm")
    return len(goods)


def _sales(config: Any, customers: list[Any], products: list[Any], term: Any, today: dt.date) -> list[str]:  # fmt: skip
    from proteus import Model

    Sale = Model.get("sale.sale")
    states = []
    for i, target in enumerate(("confirmed", "quotation", "draft")):
        sale = Sale(party=customers[i], payment_term=term, sale_date=today)
        sale.invoice_method = "fulfillment"  # invoiced when shipped: no undated draft invoice
        line = sale.lines.new()
        line.product = products[i]
        line.quantity = float(2 + i)
        sale.save()
        if target in ("quotation", "confirmed"):
            sale.click("quote")
        if target == "confirmed":
            sale.click("confirm")
        sale.reload()
        states.append(sale.state)
    return states


def _purchase(config: Any, suppliers: list[Any], products: list[Any], today: dt.date) -> str:
    from proteus import Model

    Purchase = Model.get("purchase.purchase")
    purchase = Purchase(party=suppliers[0], purchase_date=today)
    line = purchase.lines.new()
    line.product = products[1]
    line.quantity = 10.0
    line.unit_price = Decimal("70.00")
    purchase.save()
    purchase.click("quote")
    purchase.click("confirm")
    purchase.reload()
    return str(purchase.state)


def _users(config: Any, companies: dict[str, dict[str, Any]]) -> None:
    from proteus import Model

    User = Model.get("res.user")
    Group = Model.get("res.group")
    groups = {g.name: g.id for g in Group.find([])}
    Company = Model.get("company.company")
    for login, name, wanted, keys, company_filter in USERS:
        user = User(name=name, login=login, password=PASSWORD)
        for key in keys:
            user.companies.append(Company(companies[key]["company"].id))
        user.company = Company(companies[keys[0]]["company"].id)
        user.company_filter = company_filter
        for group in wanted:
            user.groups.append(Group(groups[group]))
        user.save()
