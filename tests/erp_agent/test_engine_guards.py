"""Each guard reproduces the failure it prevents."""

from __future__ import annotations

from erp_agent.engine import guards


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
