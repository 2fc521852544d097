"""Drafts every branch has: invoices keyed in but not yet submitted.

Recent drafts otherwise arise by chance, so a small data set could have none in a branch — and a
demo without drafts cannot show that a total counts submitted documents only. They draw from their
own random stream, so adding them leaves the rest of the data set unchanged.
"""

from __future__ import annotations

import datetime as dt
import random

from demo_erp.seed.base import Seeder
from demo_erp.seed.masters import price

STREAM = 0x0D2AF7  # mixed into the seed: the drafts' own random stream


def ensure_branch_drafts(s: Seeder, seed: int) -> None:
    """One draft Sales Invoice of the last three days in each branch that has none."""
    rng = random.Random(seed ^ STREAM)
    have = {
        row["branch"]
        for row in s.conn.execute(
            "select distinct branch from `tabSales Invoice` where docstatus = 0"
        )
    }
    sellable = [i for i in s.data["items"] if i.is_stock]
    for branch in s.branches.values():
        if branch.name in have:
            continue
        company = s.companies[branch.company]
        parties, _ = s.data["customers_by_branch"][branch.name]
        party = rng.choice(parties)
        day = s.today - dt.timedelta(days=rng.randrange(0, 3))
        items = rng.sample(sellable, k=min(2, len(sellable)))
        s.at(day)
        s.insert(
            "Sales Invoice",
            {
                "customer": party.name,
                "company": company.name,
                "currency": company.currency,
                "territory": branch.territory,
                "branch": branch.name,
                "posting_date": day,
                "due_date": day + dt.timedelta(days=party.terms),
                "conversion_rate": 1,
                "selling_price_list": f"Standard Selling {company.currency}",
                "debit_to": company.acc("Debtors"),
                "customer_group": party.group,
                "cost_center": branch.cost_center,
                "items": [
                    {
                        "item_code": item.code,
                        "qty": rng.randint(1, 3),
                        "rate": price(company, item.usd_rate),
                        "uom": item.uom,
                        "warehouse": branch.warehouse,
                        "income_account": company.acc("Sales"),
                        "cost_center": branch.cost_center,
                    }
                    for item in items
                ],
                "docstatus": 0,
            },
            on=day,
        )
