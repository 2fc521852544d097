"""Stock bookkeeping for the generator, opening stock, transfers and issues."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import defaultdict
from dataclasses import dataclass, field

from demo_erp.seed.accounts import journal
from demo_erp.seed.base import BranchInfo, Seeder, month_end, workdays
from demo_erp.seed.masters import QTY_FACTOR, ItemInfo, monthly_demand, price, qty_range

Key = tuple[str, str]  # (item_code, warehouse)


@dataclass
class StockBook:
    """What the generator may still deliver from each warehouse.

    Receipts only count from the next month on, so a sale never relies on a receipt that is
    posted later than it: stock never goes negative, whatever order the ledger is read in.
    """

    available: defaultdict[Key, float] = field(default_factory=lambda: defaultdict(float))
    pending: defaultdict[Key, float] = field(default_factory=lambda: defaultdict(float))
    sold: defaultdict[Key, float] = field(default_factory=lambda: defaultdict(float))
    last_sold: dict[Key, float] = field(default_factory=dict)
    # Per warehouse: the items it stocks and cumulative popularity weights, for fast picks.
    assortment: dict[str, list[ItemInfo]] = field(default_factory=dict)
    cum_weights: dict[str, list[float]] = field(default_factory=dict)

    def take(self, key: Key, wanted: float) -> float:
        qty = float(min(int(self.available[key]), int(wanted)))
        if qty > 0:
            self.available[key] -= qty
            self.sold[key] += qty
        return qty

    def receive(self, key: Key, qty: float) -> None:
        self.pending[key] += qty

    def roll_month(self) -> None:
        for key, qty in self.pending.items():
            self.available[key] += qty
        self.pending.clear()
        self.last_sold = dict(self.sold)
        self.sold.clear()


def book(s: Seeder) -> StockBook:
    value = s.data.get("stock")
    if value is None:
        value = s.data["stock"] = StockBook()
    assert isinstance(value, StockBook)
    return value


def pick_items(s: Seeder, warehouse: str, count: int) -> list[ItemInfo]:
    """Up to ``count`` distinct items of the warehouse, popular ones more often."""
    stock = book(s)
    items = stock.assortment[warehouse]
    chosen = s.rng.choices(items, cum_weights=stock.cum_weights[warehouse], k=count * 2)
    out: list[ItemInfo] = []
    for item in chosen:
        if item not in out and stock.available[(item.code, warehouse)] >= 1:
            out.append(item)
        if len(out) == count:
            break
    return out


def sale_qty(s: Seeder, item: ItemInfo, currency: str) -> int:
    lo, hi = qty_range(item)
    return round(s.rng.randint(lo, hi) * QTY_FACTOR[currency])


def branch_share(s: Seeder, branch: BranchInfo) -> float:
    """The branch's share of all sales invoices."""
    company_share = s.data["company_share"][branch.company]
    return float(company_share * branch.weight)


def opening_stock(s: Seeder) -> None:
    """Material Receipts on the first day, per warehouse, for most of the catalogue."""
    stock = book(s)
    items = [i for i in s.data["items"] if i.is_stock]
    opening: dict[str, float] = {}
    for branch in s.branches.values():
        company = s.companies[branch.company]
        share = 0.55 + branch.weight
        assortment = [i for i in items if s.rng.random() < min(0.95, share)]
        stock.assortment[branch.warehouse] = assortment
        stock.cum_weights[branch.warehouse] = list(
            itertools.accumulate(i.popularity for i in assortment)
        )
        rows = []
        total = sum(i.popularity for i in assortment)
        invoices = s.data["invoices_per_month"] * branch_share(s, branch)
        for item in assortment:
            demand = monthly_demand(item, invoices, total, company.currency)
            # Two to four months of cover to start with.
            qty = float(round(demand * s.rng.uniform(2, 4)) + item.reorder_level)
            rows.append(
                {
                    "item_code": item.code,
                    "qty": qty,
                    "uom": item.uom,
                    "t_warehouse": branch.warehouse,
                    "basic_rate": price(company, item.usd_cost),
                }
            )
            stock.available[(item.code, branch.warehouse)] += qty
        entry = s.insert(
            "Stock Entry",
            {
                "stock_entry_type": "Material Receipt",
                "company": company.name,
                "posting_date": s.start,
                "posting_time": "08:00:00",
                "to_warehouse": branch.warehouse,
                "remarks": "Opening stock",
                "branch": branch.name,
                "items": rows,
                "docstatus": 1,
            },
            on=s.start,
        )
        value = float(entry.get("total_amount") or 0) or sum(
            r["qty"] * r["basic_rate"] for r in rows
        )
        opening[company.name] = opening.get(company.name, 0.0) + value
    # The opening stock was brought in by the owners, not earned: move it from Stock Adjustment
    # to equity so the first month's profit is not inflated.
    for company_name, value in opening.items():
        company = s.companies[company_name]
        journal(
            s,
            company,
            s.start,
            "Opening stock capitalised",
            [("Stock Adjustment", round(value, 2), 0.0), ("Capital Stock", 0.0, round(value, 2))],
            voucher_type="Opening Entry",
        )


def monthly_movements(s: Seeder, month: dt.date) -> None:
    """A few transfers between branches and write-offs of damaged goods."""
    stock = book(s)
    days = [d for d in workdays(month, month_end(month)) if d <= s.today]
    if not days:
        return
    for company in s.companies.values():
        branches = [s.branches[b] for b in company.branches]
        for _ in range(s.n(2)):
            source, target = s.rng.sample(branches, 2)
            _movement(s, stock, "Material Transfer", source, target, s.pick(days))
        # Write-offs are as frequent as the trade: a fixed count would swamp a small volume.
        if s.rng.random() < 0.7 * min(1.0, s.scale / 0.2):
            branch = s.pick(branches)
            _movement(s, stock, "Material Issue", branch, None, s.pick(days))


def _movement(
    s: Seeder,
    stock: StockBook,
    purpose: str,
    source: BranchInfo,
    target: BranchInfo | None,
    day: dt.date,
) -> None:
    rows = []
    for item in pick_items(s, source.warehouse, s.rng.randint(1, 4)):
        qty = stock.take(
            (item.code, source.warehouse),
            max(1, sale_qty(s, item, s.companies[source.company].currency) // 4),
        )
        if not qty:
            continue
        row = {"item_code": item.code, "qty": qty, "uom": item.uom, "s_warehouse": source.warehouse}
        if target is not None:
            row["t_warehouse"] = target.warehouse
            stock.receive((item.code, target.warehouse), qty)
        rows.append(row)
    if not rows:
        return
    s.insert(
        "Stock Entry",
        {
            "stock_entry_type": purpose,
            "company": source.company,
            "posting_date": day,
            "from_warehouse": source.warehouse,
            "to_warehouse": target.warehouse if target else None,
            "remarks": f"Stock rebalancing to {target.name}"
            if target
            else "Damaged goods written off",
            "branch": source.name,
            "items": rows,
            "docstatus": 1,
        },
        on=day,
    )
