"""Receivables and payables ageing from open invoices: outstanding amounts by days overdue."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal

from erp_agent.analytics._result import AnalysisResult, Row, chart, fmt, num, to_date
from erp_agent.analytics.defaults import DEFAULT_RANGES
from erp_agent.errors import ToolInputError

NOT_DUE = "Not yet due"


def bucket_labels(ranges: Sequence[int]) -> list[str]:
    """``["Not yet due", "1-30", "31-60", …, "121+"]`` for ranges (30, 60, 90, 120)."""
    labels = [NOT_DUE]
    low = 1
    for high in ranges:
        labels.append(f"{low}-{high}")
        low = high + 1
    labels.append(f"{low}+")
    return labels


def _check(ranges: Sequence[int]) -> None:
    if not ranges or any(r <= 0 for r in ranges) or list(ranges) != sorted(set(ranges)):
        raise ToolInputError("ranges must be increasing positive day counts, e.g. [30, 60, 90]")


def bucket_of(days_overdue: int, ranges: Sequence[int]) -> int:
    """Index into ``bucket_labels``: 0 if not overdue, else the first range that holds it."""
    if days_overdue <= 0:
        return 0
    for i, high in enumerate(ranges):
        if days_overdue <= high:
            return i + 1
    return len(ranges) + 1


def ageing(
    rows: Iterable[Row],
    *,
    as_of: dt.date,
    ranges: Sequence[int] = DEFAULT_RANGES,
    party: str | None = "party",
    side: str = "receivable",
    top: int = 10,
) -> AnalysisResult:
    """Rows: ``{outstanding, due_date}`` and optionally ``{party}``; age = as_of − due_date.

    Zero balances are skipped; negative ones (credit notes, advances) count in their bucket,
    so the total is the net balance the ERP's own ageing shows.
    """
    _check(ranges)
    labels = bucket_labels(ranges)
    amounts = [Decimal(0)] * len(labels)
    counts = [0] * len(labels)
    by_party: dict[str, Decimal] = {}
    weighted = Decimal(0)  # Σ overdue amount × days, for the average days overdue
    overdue_amount = Decimal(0)
    oldest: tuple[int, str] | None = None
    for row in rows:
        amount = Decimal(str(row.get("outstanding") or 0))
        if amount == 0:
            continue
        due = to_date(row.get("due_date") or row.get("date"))
        days = (as_of - due).days
        index = bucket_of(days, ranges)
        amounts[index] += amount
        counts[index] += 1
        if days > 0:
            overdue_amount += amount
            weighted += amount * days
            if party and row.get(party):
                name = str(row[party])
                by_party[name] = by_party.get(name, Decimal(0)) + amount
            if oldest is None or days > oldest[0]:
                oldest = (days, str(row.get("id") or ""))
    total = sum(amounts, start=Decimal(0))
    documents = sum(counts)
    overdue_share = float(overdue_amount / total * 100) if total > 0 else None
    avg_days = float(weighted / overdue_amount) if overdue_amount > 0 else None
    kpis = {
        "as_of": as_of.isoformat(),
        "total_outstanding": num(total),
        "documents": documents,
        "overdue": num(overdue_amount),
        "overdue_share_pct": None if overdue_share is None else num(overdue_share, 1),
        "average_days_overdue": None if avg_days is None else num(avg_days, 1),
        "oldest_days_overdue": oldest[0] if oldest else None,
        "buckets": [
            {"bucket": label, "amount": num(a), "documents": c}
            for label, a, c in zip(labels, amounts, counts, strict=True)
        ],
    }
    who = "customers" if side == "receivable" else "suppliers"
    observations = [
        f"As of {as_of.isoformat()}, {fmt(total)} is outstanding ({side}s) on {documents} "
        "documents."
    ]
    if overdue_amount > 0:
        observations.append(
            f"{fmt(overdue_amount)} of it is overdue ({overdue_share:.1f}% of the balance), on "
            f"average {avg_days:.0f} days past due weighted by amount."
            if overdue_share is not None and avg_days is not None
            else f"{fmt(overdue_amount)} of it is overdue."
        )
        worst = max(range(1, len(labels)), key=lambda i: amounts[i])
        observations.append(
            f"The largest overdue bucket is {labels[worst]} days with {fmt(amounts[worst])} "
            f"on {counts[worst]} documents."
        )
        if amounts[-1] > 0:
            observations.append(
                f"{fmt(amounts[-1])} is more than {ranges[-1]} days overdue ({counts[-1]} "
                "documents)."
            )
    else:
        observations.append("Nothing is overdue.")
    observations.append(
        "By days past due: "
        + "; ".join(f"{label} {fmt(a)}" for label, a in zip(labels, amounts, strict=True))
        + "."
    )
    ranked = sorted(by_party.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    if ranked:
        observations.append(
            f"The {who} with the most overdue: "
            + "; ".join(f"{name} {fmt(value)}" for name, value in ranked[:3])
            + "."
        )
    return AnalysisResult(
        kpis=kpis,
        chart=chart("bar", labels, [("Outstanding", [num(a) for a in amounts])]),
        observations=observations,
        table=[{"party": name, "overdue": num(value)} for name, value in ranked],
    )
