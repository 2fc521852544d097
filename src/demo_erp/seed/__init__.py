"""The deterministic demo data generator.

``seed(path)`` (re)creates the SQLite file and fills it with two companies and 24 months of
history ending at ``today``. Every transaction goes through ``documents.insert`` as
Administrator, so the controllers compute totals and post the ledgers as they would for a user.
The same ``seed`` and ``today`` always give the same data.
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from demo_erp import db, documents
from demo_erp.context import Settings
from demo_erp.meta import all_doctypes
from demo_erp.seed import (
    accounts,
    buying,
    crm,
    drafts,
    hr,
    masters,
    overheads,
    selling,
    stock,
    trees,
    users,
)
from demo_erp.seed.base import Seeder, add_months, make_ctx, month_starts
from demo_erp.seed.bulk import bulk_invoices
from demo_erp.seed.summary import SeedSummary
from demo_erp.seed.users import DEMO_USERS, DemoUser, api_credentials

# Sales invoices per month at scale 1, before trend and seasonality (about 2,600 in total).
INVOICES_PER_MONTH = 200
HISTORY_MONTHS = 24
# Link columns the controllers query on every submit (order progress, returns, payments);
# without an index each lookup scans the whole table and seeding turns quadratic.

__all__ = ["DEMO_USERS", "DemoUser", "SeedSummary", "api_credentials", "seed"]


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def seed(
    path: str | Path,
    *,
    seed: int = 42,
    today: dt.date | None = None,
    password: str = "demo",
    invoices: int | None = None,
    scale: float = 1.0,
    progress: Callable[[str], None] | None = None,
    now: dt.datetime | None = None,
) -> SeedSummary:
    """Create (or recreate) the demo database at ``path`` and fill it.

    ``scale`` multiplies transaction and master volumes (tests use about 0.1); ``invoices`` adds
    that many sales invoices through the bulk path (no ledgers), for benchmarks.
    """
    started = time.perf_counter()
    today = today or dt.date.today()
    path = Path(path)
    _remove(path)
    conn = db.connect(path)
    db.create_schema(conn)
    # No seeded `modified` after the moment of seeding (``now``, the real clock by default).
    ctx = make_ctx(conn, Settings(db_path=str(path), today=today), now or dt.datetime.now())
    start = add_months(today.replace(day=1), -(HISTORY_MONTHS - 1))
    s = Seeder(ctx, random.Random(seed), today, start, scale, progress)
    s.data["invoices_per_month"] = INVOICES_PER_MONTH * scale
    try:
        with documents.transaction(conn):
            _generate(s, seed, password)
        if invoices:
            s.say(f"bulk sales invoices: 0 of {invoices:,}")
            bulk_invoices(s, invoices)
        summary = SeedSummary(path=str(path), seed=seed, today=today.isoformat())
        summary.counts = _counts(conn)
        summary.bulk_invoices = invoices or 0
        if invoices:
            summary.notes.append(
                f"{invoices:,} of the sales invoices were bulk-written: consistent totals, "
                "outstanding and status, but no GL entries, payments or payment schedules."
            )
    finally:
        conn.close()
    summary.seconds = round(time.perf_counter() - started, 2)
    return summary


def _generate(s: Seeder, seed: int, password: str) -> None:
    s.at(s.start - dt.timedelta(days=30))
    s.say("users")
    users.create_users(s, seed, password)
    s.say("setup masters")
    masters.setup(s)
    hr.masters(s)
    s.say("customers, suppliers and items")
    masters.customers(s)
    masters.suppliers(s)
    masters.items(s)
    trees.rebuild_all(s.conn)
    s.say("employees")
    hr.employees(s)
    selling.setup(s)
    buying.setup(s)
    crm.leads(s)
    s.say("opening balances")
    accounts.capital_injection(s)
    stock.opening_stock(s)
    months = month_starts(s.start, s.today)
    for index, month in enumerate(months):
        s.say(f"transactions {month:%b %Y}")
        stock.book(s).roll_month()
        buying.run_month(s, month, is_last=index == len(months) - 1)
        stock.monthly_movements(s, month)
        selling.run_month(s, month, index, len(months))
        # Overheads follow the month's sales, so margins hold at every scale.
        overheads.book_month(s, month)
        if index == 0:
            accounts.close_first_month(s)
    s.say("payroll, leave and attendance")
    hr.payroll(s)
    hr.leave_and_attendance(s)
    drafts.ensure_branch_drafts(s, seed)
    buying.ensure_draft_order(s, seed)
    hr.expense_claims(s)
    s.say("CRM and projects")
    crm.opportunities(s)
    crm.contacts_and_addresses(s)
    crm.projects(s)
    selling.freeze_bad_payers(s)
    hr.leave_allocations(s)
    trees.rebuild_all(s.conn)


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Documents per DocType as stored, including the ledgers the controllers posted."""
    out = {}
    for meta in all_doctypes().values():
        if meta.istable:
            continue
        (count,) = conn.execute(f'select count(*) from "{meta.table_name}"').fetchone()
        if count:
            out[meta.name] = int(count)
    return out
