"""The bulk path for benchmarks: many sales invoices written straight into their tables.

Totals, outstanding amounts and statuses are consistent with what the controllers compute, but
nothing is posted: no GL entries, stock ledger entries, payment entries or payment schedules.
"""

from __future__ import annotations

import datetime as dt
import itertools
import time
from collections.abc import Iterator
from typing import Any

from demo_erp import db
from demo_erp.records import require_meta
from demo_erp.seed.base import Seeder, round2
from demo_erp.seed.masters import price

_BATCH = 50_000


def _status(outstanding: float, grand: float, due: dt.date, today: dt.date) -> str:
    # ERPNext's Sales Invoice.set_status order: Paid, Overdue, Partly Paid, Unpaid.
    if outstanding <= 0:
        return "Paid"
    if due < today:
        return "Overdue"
    if outstanding < grand:
        return "Partly Paid"
    return "Unpaid"


def bulk_invoices(s: Seeder, count: int) -> None:
    conn = s.conn
    rng = s.rng
    parent = require_meta("Sales Invoice")
    child = require_meta("Sales Invoice Item")
    parent_cols = [
        "name",
        "owner",
        "creation",
        "modified",
        "modified_by",
        "docstatus",
        "idx",
        "customer",
        "customer_name",
        "company",
        "posting_date",
        "due_date",
        "is_return",
        "currency",
        "conversion_rate",
        "selling_price_list",
        "debit_to",
        "territory",
        "customer_group",
        "cost_center",
        "total_qty",
        "net_total",
        "total_taxes_and_charges",
        "grand_total",
        "base_net_total",
        "base_grand_total",
        "rounded_total",
        "paid_amount",
        "outstanding_amount",
        "remarks",
        "status",
        "branch",
    ]
    child_cols = [
        "name",
        "owner",
        "creation",
        "modified",
        "modified_by",
        "docstatus",
        "idx",
        "parent",
        "parentfield",
        "parenttype",
        "item_code",
        "item_name",
        "qty",
        "uom",
        "rate",
        "amount",
        "income_account",
        "cost_center",
        "warehouse",
    ]
    parent_sql = (
        f'insert into "{parent.table_name}" ({", ".join(chr(34) + c + chr(34) for c in parent_cols)}) '
        f"values ({', '.join('?' for _ in parent_cols)})"
    )
    child_sql = (
        f'insert into "{child.table_name}" ({", ".join(chr(34) + c + chr(34) for c in child_cols)}) '
        f"values ({', '.join('?' for _ in child_cols)})"
    )
    customers = list(s.data["customers"])
    cum = list(itertools.accumulate(c.weight for c in customers))
    stock_items = [i for i in s.data["items"] if i.is_stock]
    item_cum = list(itertools.accumulate(i.popularity for i in stock_items))
    prices = {
        (i.code, company): price(s.companies[company], i.usd_rate)
        for i in stock_items
        for company in s.companies
    }
    span = (s.today - s.start).days + 1
    offsets = sorted(rng.randrange(span) for _ in range(count))
    series: dict[str, int] = {}
    for row in conn.execute("select name, current from __Series where name like 'ACC-SINV-%'"):
        series[row["name"]] = row["current"]

    latest = s.ctx.not_after

    def invoices() -> Iterator[tuple[list[Any], list[list[Any]]]]:
        for offset in offsets:
            day = s.start + dt.timedelta(days=offset)
            prefix = f"ACC-SINV-{day.year}-"
            series[prefix] = series.get(prefix, 0) + 1
            name = f"{prefix}{series[prefix]:05d}"
            party = rng.choices(customers, cum_weights=cum, k=1)[0]
            company = s.companies[party.company]
            branch = s.branches[party.branch]
            entered = dt.datetime.combine(day, dt.time(rng.randrange(8, 18), rng.randrange(60)))
            if latest is not None and entered > latest:  # never after the seeding moment
                entered = max(dt.datetime.combine(day, dt.time()), latest)
            stamp = entered.strftime("%Y-%m-%d %H:%M:%S.%f")
            lines = []
            net = 0.0
            qty_total = 0.0
            for idx, item in enumerate(
                rng.choices(stock_items, cum_weights=item_cum, k=rng.randint(1, 3)), 1
            ):
                qty = float(rng.randint(1, 12))
                rate = prices[(item.code, party.company)]
                amount = round2(qty * rate)
                net += amount
                qty_total += qty
                lines.append(
                    [
                        s.hash_name(),
                        "Administrator",
                        stamp,
                        stamp,
                        "Administrator",
                        1,
                        idx,
                        name,
                        "items",
                        "Sales Invoice",
                        item.code,
                        item.name,
                        qty,
                        item.uom,
                        rate,
                        amount,
                        company.acc("Sales"),
                        branch.cost_center,
                        branch.warehouse,
                    ]
                )
            net = round2(net)
            tax = round2(net * company.tax_rate / 100)
            grand = round2(net + tax)
            due = day + dt.timedelta(days=party.terms)
            overdue = (s.today - due).days
            roll = rng.random()
            if overdue < 0:
                outstanding = grand if roll < 0.8 else 0.0
            elif roll < (0.3 if overdue <= 30 else 0.12 if overdue <= 120 else 0.02):
                outstanding = grand if rng.random() < 0.7 else round2(grand * rng.uniform(0.3, 0.7))
            else:
                outstanding = 0.0
            yield (
                [
                    name,
                    "Administrator",
                    stamp,
                    stamp,
                    "Administrator",
                    1,
                    0,
                    party.name,
                    party.name,
                    company.name,
                    day.isoformat(),
                    due.isoformat(),
                    0,
                    company.currency,
                    1.0,
                    f"Standard Selling {company.currency}",
                    company.acc("Debtors"),
                    party.territory,
                    party.group,
                    branch.cost_center,
                    qty_total,
                    net,
                    tax,
                    grand,
                    net,
                    grand,
                    float(round(grand)),
                    0.0,
                    outstanding,
                    "Bulk benchmark invoice",
                    _status(outstanding, grand, due, s.today),
                    branch.name,
                ],
                lines,
            )

    # Indexes are rebuilt once at the end: far cheaper than updating them row by row.
    indexes = [
        row["name"]
        for row in conn.execute(
            "select name from sqlite_master where type = 'index' and sql is not null "
            "and tbl_name in (?, ?)",
            (parent.table_name, child.table_name),
        )
    ]
    started = time.perf_counter()
    conn.execute("begin immediate")
    for index in indexes:
        conn.execute(f'drop index "{index}"')
    source = invoices()
    written = 0
    while True:
        batch = list(itertools.islice(source, _BATCH))
        if not batch:
            break
        conn.executemany(parent_sql, [p for p, _ in batch])
        conn.executemany(child_sql, [line for _, lines in batch for line in lines])
        written += len(batch)
        s.say(
            f"bulk sales invoices: {written:,} of {count:,} ({time.perf_counter() - started:.0f} s)"
        )
    for statement in db.table_ddl(parent) + db.table_ddl(child):
        conn.execute(statement)
    conn.executemany(
        "insert into __Series (name, current) values (?, ?) "
        "on conflict(name) do update set current = excluded.current",
        sorted(series.items()),
    )
    conn.execute("commit")
