"""Each guard reproduces the failure it prevents."""

from __future__ import annotations

from decimal import Decimal

import pytest

from erp_agent.engine import guards
from erp_agent.engine.guards import unsupported_figures


def test_repeated_identical_call_is_refused() -> None:
    state = guards.GuardState()
    offered = ["sales_invoice.list"]
    assert guards.check_call(state, "sales_invoice.list", {"filters": []}, offered) is None
    again = guards.check_call(state, "sales_invoice.list", {"filters": []}, offered)
    assert again is not None
    assert "already called" in again
    assert (
        guards.check_call(state, "sales_invoice.list", {"filters": [], "limit": 5}, offered) is None
    )


def test_paging_through_rows_to_total_is_redirected_to_aggregate() -> None:
    state = guards.GuardState()
    offered = ["sales_invoice.list"]
    for start in (20, 40):
        assert guards.check_call(state, "sales_invoice.list", {"start": start}, offered) is None
    refused = guards.check_call(state, "sales_invoice.list", {"start": 60}, offered)
    assert refused is not None
    assert "sales_invoice.aggregate" in refused


def test_tool_not_offered_is_refused() -> None:
    refused = guards.check_call(guards.GuardState(), "salary_slip.list", {}, ["sales_invoice.list"])
    assert refused is not None
    assert "tools.search" in refused


def test_three_consecutive_failures_stop() -> None:
    state = guards.GuardState()
    assert not guards.record_result(state, ok=False)
    assert not guards.record_result(state, ok=False)
    assert not guards.record_result(state, ok=True)
    assert not guards.record_result(state, ok=False)
    assert not guards.record_result(state, ok=False)
    assert guards.record_result(state, ok=False)


def test_provenance_accepts_formatted_figures_and_flags_invented_ones() -> None:
    sources = guards.numbers_in(
        {
            "rows": [{"sum_total": 1234567.8, "share": 0.125}],
            "count": 42,
            "note": "KES 9,999.50 due",
        }
    )
    answer = (
        "Total billed was KES 1,234,567.80 (about 1.2M) over 42 invoices on 2026-03-01; "
        "top customer share 12.5%; invoice ACC-SINV-2026-00123 has 9,999.50 due."
    )
    assert guards.unsupported_figures(answer, sources) == []
    invented = "Total billed was KES 1,250,000.00 and growth was 7.3%."
    assert guards.unsupported_figures(invented, sources) == ["1,250,000.00", "7.3%"]


def test_provenance_allows_the_users_own_numbers() -> None:
    assert (
        guards.unsupported_figures(
            "Invoices over 10,000 overdue by 60 days: none.", set(), "over 10,000 and 60 days"
        )
        == []
    )


@pytest.mark.parametrize(
    "answer",
    [
        "Billed in November 2026: KES 1,234.50.",
        "In Q2 2026 and FY 2025/26 we billed KES 1,234.50.",
        "As of 30 Nov 2026 (2026-11-30, 30/11/2026 at 14:30), KES 1,234.50 is owed.",
        "On the 30th of November, March 2026 and in 2026: KES 1,234.50.",
    ],
)
def test_dates_and_years_in_any_form_are_not_figures(answer: str) -> None:
    """A year costs no extra call: "2026" in "November 2026" is when, not how much."""
    assert unsupported_figures(answer, {Decimal("1234.5")}) == []


def test_figures_in_words_and_shares_worked_out_are_checked() -> None:
    sources = {Decimal("120"), Decimal("360")}
    # A share the model computed (120 / 360) and wrote in words: no tool gave it.
    assert unsupported_figures("About a third of receivables are overdue.", sources) == [
        "About a third"
    ]
    assert unsupported_figures("Sales were twice as high.", sources) == ["twice as"]
    assert unsupported_figures("There were fifteen late invoices.", sources) == ["fifteen"]
    # A share a tool returned (0.33, 33.3%) supports the words.
    assert unsupported_figures("About a third is overdue.", {Decimal("0.334")}) == []
    assert unsupported_figures("A third is overdue.", {Decimal("33.3")}) == []
    # Periods are no shares: "this quarter", "the first half of 2026".
    assert unsupported_figures("This quarter and the first half of 2026.", sources) == []
