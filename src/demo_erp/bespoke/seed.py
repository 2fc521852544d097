"""Seed the bespoke demo database deterministically (same seed and date, same rows).

Two tenants, five branches (Savanna Traders: Nairobi, Kisumu, Mombasa; Lakeside Hardware:
Eldoret, Nakuru), customers, products, invoices with lines, payments and stock levels. Every
user's password is ``demo`` unless given.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import random
from decimal import Decimal

import sqlalchemy as sa

from demo_erp.bespoke import schema

TENANTS = {
    "SAVANNA": ("Savanna Traders Ltd", ["Nairobi", "Kisumu", "Mombasa"]),
    "LAKESIDE": ("Lakeside Hardware Ltd", ["Eldoret", "Nakuru"]),
}
USERS = [
    # email, name, tenant, branches, roles
    ("owner@savanna.test", "Grace Wanjiru", "SAVANNA", "Nairobi,Kisumu,Mombasa",
     "Accounts Manager,Sales Manager,Stock Manager"),
    ("kisumu@savanna.test", "Otieno Ouma", "SAVANNA", "Kisumu", "Accounts User,Sales User"),
    ("mombasa@savanna.test", "Amina Said", "SAVANNA", "Mombasa", "Accounts User,Sales User"),
    ("viewer@savanna.test", "Peter Kamau", "SAVANNA", "Nairobi", "Sales User"),
    ("owner@lakeside.test", "Jane Chebet", "LAKESIDE", "Eldoret,Nakuru",
     "Accounts Manager,Sales Manager,Stock Manager"),
    ("noscope@savanna.test", "New Starter", "SAVANNA", "", "Accounts User"),
]  # fmt: skip
CATEGORIES = {
    "Cement": ("bag", 780), "Roofing": ("sheet", 1450), "Paint": ("tin", 2300),
    "Plumbing": ("piece", 640), "Electrical": ("piece", 320), "Tools": ("piece", 1900),
}  # fmt: skip
FIRST = [
    "Baraka",
    "Jua Kali",
    "Pwani",
    "Ziwa",
    "Mlima",
    "Tumaini",
    "Upendo",
    "Neema",
    "Imara",
    "Faraja",
]
LAST = ["Builders", "Hardware", "Contractors", "Supplies", "Works", "Traders", "Ventures"]
CENT = Decimal("0.01")


def create_schema(engine: sa.Engine) -> None:
    schema.metadata.drop_all(engine)
    schema.metadata.create_all(engine)


def _stamp(day: dt.date, rng: random.Random) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(8)) + dt.timedelta(
        seconds=rng.randrange(36000), microseconds=rng.randrange(1_000_000)
    )


def seed(
    url: str,
    *,
    seed: int = 7,
    today: dt.date | None = None,
    invoices_per_branch: int = 120,
    password: str = "demo",
) -> None:
    """Create the schema at ``url`` (dropping any previous demo tables) and fill it."""
    today = today or dt.date.today()
    rng = random.Random(seed)
    engine = sa.create_engine(url)
    try:
        create_schema(engine)
        with engine.begin() as conn:
            _fill(conn, rng, today, invoices_per_branch, password)
    finally:
        engine.dispose()


def _password_hash(password: str, *, salt: str, iterations: int) -> str:
    """``pbkdf2_sha256$<iterations>$<salt>$<base64 hash>``: the form a bespoke users table keeps
    and the sql connector's principal source reads (the demo ERP never imports the agent)."""
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"pbkdf2_sha256${iterations}${salt}${base64.b64encode(digest).decode()}"


def _fill(
    conn: sa.Connection, rng: random.Random, today: dt.date, per_branch: int, password: str
) -> None:
    start = today.replace(year=today.year - 1, month=1, day=1)
    span = (today - start).days
    stamp0 = dt.datetime.combine(start, dt.time(6))
    hashed = _password_hash(password, salt="demo-salt", iterations=20_000)
    for tid, (name, towns) in TENANTS.items():
        conn.execute(sa.insert(schema.tenants).values(
            id=tid, name=name, currency="KES", country="Kenya", vat_rate=16, updated_at=stamp0))  # fmt: skip
        for town in towns:
            conn.execute(sa.insert(schema.branches).values(
                id=town, tenant_id=tid, town=town, updated_at=stamp0))  # fmt: skip
    for email, full, tid, branches, roles in USERS:
        conn.execute(sa.insert(schema.users).values(
            email=email, full_name=full, password_hash=hashed, tenant_id=tid,
            branches=branches, roles=roles, disabled=False))  # fmt: skip
    for tid, (_, towns) in TENANTS.items():
        products = []
        for i, (category, (unit, base)) in enumerate(sorted(CATEGORIES.items())):
            for j in range(3):
                sku = f"{tid[:3]}-{category[:3].upper()}-{j + 1:02d}"
                price = Decimal(base + 150 * j + rng.randrange(100)).quantize(CENT)
                products.append((sku, price))
                conn.execute(sa.insert(schema.products).values(
                    sku=sku, tenant_id=tid, title=f"{category} grade {j + 1}", category=category,
                    unit=unit, list_price=price, unit_cost=(price * Decimal("0.7")).quantize(CENT),
                    reorder_at=10 + 5 * i, updated_at=stamp0))  # fmt: skip
        number = 0
        for town in towns:
            customers = []
            for k in range(10):
                code = f"{tid[:3]}-{town[:3].upper()}-C{k + 1:03d}"
                customers.append(code)
                conn.execute(sa.insert(schema.customers).values(
                    code=code, tenant_id=tid, branch_id=town,
                    display_name=f"{FIRST[(k + len(town)) % len(FIRST)]} {LAST[k % len(LAST)]} {town}",
                    kind="Company" if k % 3 else "Individual", phone=f"+2547{rng.randrange(10**8):08d}",
                    email=f"c{k + 1}@{town.lower()}.example", credit_limit=Decimal(50000 * (1 + k % 4)),
                    terms_days=(30, 14, 45)[k % 3], updated_at=stamp0))  # fmt: skip
            for sku, price in products:
                on_hand = Decimal(rng.randrange(0, 400))
                cost = (price * Decimal("0.7")).quantize(CENT)
                conn.execute(sa.insert(schema.stock_levels).values(
                    id=f"{sku}@{town}", tenant_id=tid, branch_id=town, sku=sku, on_hand=on_hand,
                    unit_cost=cost, stock_value=(on_hand * cost).quantize(CENT), updated_at=stamp0))  # fmt: skip
            for _ in range(per_branch):
                number += 1
                _invoice(conn, rng, tid, town, number, customers, products, start, span, today)


def _invoice(
    conn: sa.Connection, rng: random.Random, tid: str, town: str, number: int,
    customers: list[str], products: list[tuple[str, Decimal]], start: dt.date, span: int,
    today: dt.date,
) -> None:  # fmt: skip
    issued = start + dt.timedelta(days=rng.randrange(span + 1))
    due = issued + dt.timedelta(days=30)
    inv = f"{tid[:3]}-INV-{number:06d}"
    credit = rng.random() < 0.03
    sign = Decimal(-1) if credit else Decimal(1)
    lines = []
    for n in range(rng.randint(1, 4)):
        sku, price = rng.choice(products)
        qty = Decimal(rng.randint(1, 20))
        lines.append((n + 1, sku, qty * sign, price, (qty * price * sign).quantize(CENT)))
    net = sum((line[4] for line in lines), Decimal(0))
    tax = (net * Decimal("0.16")).quantize(CENT)
    gross = net + tax
    roll = rng.random()
    stage = "draft" if roll < 0.06 else "void" if roll < 0.10 else "posted"
    balance = gross
    if stage == "posted" and not credit:
        paid_roll = rng.random()
        if paid_roll < 0.6:
            balance = Decimal(0)
        elif paid_roll < 0.75:
            balance = (gross / 2).quantize(CENT)
    if stage != "posted" or credit:
        balance = Decimal(0) if credit else balance
    state = {"draft": "draft", "void": "void"}.get(stage) or (
        "paid" if balance == 0 else "partly_paid" if balance < gross
        else "overdue" if due < today else "unpaid"
    )  # fmt: skip
    created = _stamp(issued, rng)
    customer = rng.choice(customers)
    conn.execute(sa.insert(schema.invoices).values(
        number=inv, tenant_id=tid, branch_id=town, customer_code=customer, issued_on=issued,
        due_on=due, currency="KES", net_amount=net, tax_amount=tax, gross_amount=gross,
        balance=balance, stage=stage, pay_state=state, is_credit_note=credit,
        notes=None, created_by=f"owner@{tid.lower()}.test", created_at=created,
        updated_at=created))  # fmt: skip
    conn.execute(sa.insert(schema.invoice_lines), [
        {"invoice_number": inv, "line_no": n, "sku": sku, "description": None, "qty": qty,
         "unit_price": price, "line_total": total}
        for n, sku, qty, price, total in lines
    ])  # fmt: skip
    if stage == "posted" and not credit and balance < gross:
        conn.execute(sa.insert(schema.payments).values(
            ref=f"{tid[:3]}-PAY-{number:06d}", tenant_id=tid, branch_id=town,
            customer_code=customer, invoice_number=inv,
            paid_on=min(today, issued + dt.timedelta(days=rng.randrange(1, 40))),
            amount=gross - balance, method=rng.choice(["M-Pesa", "Bank Transfer", "Cash"]),
            reference=f"R{rng.randrange(10**6):06d}", updated_at=created + dt.timedelta(days=1)))  # fmt: skip
