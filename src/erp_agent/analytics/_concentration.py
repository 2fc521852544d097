"""Concentration of a total across customers, suppliers or items: top-N share, the Pareto
count (how few make 80 %), and the Herfindahl–Hirschman index."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from erp_agent.analytics._result import AnalysisResult, Row, chart, fmt, money, num

PARETO = Decimal("0.8")


def _hhi_band(hhi: float) -> str:
    # The US merger guidelines' bands (2010): below 1,500 unconcentrated, above 2,500 highly.
    if hhi < 1500:
        return "unconcentrated"
    if hhi <= 2500:
        return "moderately concentrated"
    return "highly concentrated"


def concentration(
    rows: Iterable[Row],
    *,
    key: str = "key",
    amount: str = "amount",
    top_n: int = 10,
    noun: str = "customers",
) -> AnalysisResult:
    """Rows: ``{key, amount}`` (documents, or totals per key). Amounts are netted per key;
    keys whose net is zero or negative (returns exceeding sales) are left out of the shares
    and counted in ``excluded``."""
    totals: dict[str, Decimal] = {}
    for row in rows:
        name = str(row.get(key) or "(none)")
        totals[name] = totals.get(name, Decimal(0)) + money(row.get(amount))
    positive = sorted(((k, v) for k, v in totals.items() if v > 0), key=lambda kv: (-kv[1], kv[0]))
    excluded = len(totals) - len(positive)
    total = sum((v for _, v in positive), start=Decimal(0))
    if total == 0:
        return AnalysisResult(
            kpis={"total": 0.0, "keys": 0, "excluded": excluded},
            chart=chart("bar", [], [("Total", [])]),
            observations=[f"No {noun} have a positive total in this selection."],
        )
    shares = [v / total for _, v in positive]
    top = positive[:top_n]
    top_share = sum(shares[:top_n], start=Decimal(0))
    running, pareto = Decimal(0), 0
    for share in shares:
        running += share
        pareto += 1
        if running >= PARETO:
            break
    hhi = float(sum((s * 100) ** 2 for s in shares))
    kpis = {
        "total": num(total),
        "keys": len(positive),
        "excluded": excluded,
        "top_n": len(top),
        "top_n_total": num(sum((v for _, v in top), start=Decimal(0))),
        "top_n_share_pct": num(top_share * 100, 1),
        "largest": top[0][0],
        "largest_share_pct": num(shares[0] * 100, 1),
        "pareto_80_count": pareto,
        "pareto_80_share_of_keys_pct": num(Decimal(pareto) / len(positive) * 100, 1),
        "hhi": num(hhi, 0),
        "hhi_band": _hhi_band(hhi),
    }
    observations = [
        f"{len(positive)} {noun} account for {fmt(total)}; the top {len(top)} hold "
        f"{fmt(sum((v for _, v in top), start=Decimal(0)))} of it ({top_share * 100:.1f}%).",
        f"The largest, {top[0][0]}, alone holds {shares[0] * 100:.1f}% ({fmt(top[0][1])}).",
        f"The top {len(top)}: " + "; ".join(f"{k} {fmt(v)}" for k, v in top) + ".",
        f"{pareto} {noun} ({kpis['pareto_80_share_of_keys_pct']}% of them) make up 80% of the "
        "total.",
        f"The Herfindahl–Hirschman index is {hhi:,.0f} ({_hhi_band(hhi)}).",
    ]
    if excluded:
        observations.append(f"{excluded} {noun} with a zero or negative net are not counted.")
    rest = total - sum((v for _, v in top), start=Decimal(0))
    labels = [k for k, _ in top] + (["Others"] if rest > 0 else [])
    values = [num(v) for _, v in top] + ([num(rest)] if rest > 0 else [])
    return AnalysisResult(
        kpis=kpis,
        chart=chart("doughnut", labels, [("Total", values)]),
        observations=observations,
        table=[
            {"key": k, "amount": num(v), "share_pct": num(s * 100, 2)}
            for (k, v), s in zip(top, shares, strict=False)
        ],
    )
