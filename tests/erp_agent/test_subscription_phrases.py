"""The wording of standing requests (the planner's API, subscriptions/phrases.py), schedules in
words and cron (subscriptions/schedule.py), and the queue's tick schedule."""

from __future__ import annotations

import datetime as dt

import pytest

from erp_agent.config import Settings, SubscriptionSettings
from erp_agent.errors import ToolInputError
from erp_agent.queue.subscriptions import RUN_SUBSCRIPTIONS, subscription_schedule
from erp_agent.subscriptions import schedule
from erp_agent.subscriptions.figures import figures, holds
from erp_agent.subscriptions.phrases import (
    Management,
    create_arguments,
    read_management,
    read_standing_request,
)


@pytest.mark.parametrize(
    ("text", "kind", "question", "cron", "condition", "channels"),
    [
        ("send me this every Monday at 8", "digest", "this", "0 8 * * 1", None, ()),
        ("Email me revenue by branch every weekday at 7:30am", "digest", "revenue by branch",
         "30 7 * * 1-5", None, ("email",)),
        ("send me the overdue invoices every month on the 5th", "digest", "the overdue invoices",
         "0 8 5 * *", None, ()),
        ("tell me when stock of Nails falls below 50", "alert", "stock of Nails", None,
         {"on": "value", "op": "<", "value": 50.0}, ()),
        ("alert me when an invoice over 1M is overdue", "alert", "overdue invoice over 1M", None,
         {"on": "value", "op": ">", "value": 0}, ()),
        ("notify me by email when overdue receivables exceed 1,000,000", "alert",
         "overdue receivables", None, {"on": "value", "op": ">", "value": 1e6}, ("email",)),
        ("let me know if receivables go above 2.5m", "alert", "receivables", None,
         {"on": "value", "op": ">", "value": 2.5e6}, ()),
    ],
)  # fmt: skip
def test_standing_requests_are_read_into_a_schedule_or_a_condition(
    text: str,
    kind: str,
    question: str,
    cron: str | None,
    condition: object,
    channels: tuple[str, ...],
) -> None:
    found = read_standing_request(text)
    assert found is not None
    assert (found.kind, found.question, found.schedule, found.condition, found.channels) == (
        kind, question, cron, condition, channels
    )  # fmt: skip


@pytest.mark.parametrize(
    "text", ["stop", "show me revenue", "tell me about our top customers", "send me the invoice",
             "every customer in Nairobi"],
)  # fmt: skip
def test_other_questions_are_not_standing_requests(text: str) -> None:
    assert read_standing_request(text) is None
    assert read_management(text) is None


def test_managing_subscriptions_is_read_from_words() -> None:
    assert read_management("what am I subscribed to?") == Management("list")
    assert read_management("Show my alerts") == Management("list")
    assert read_management("stop the Monday digest") == Management("pause", "the Monday digest")
    assert read_management("resume the stock alert") == Management("resume", "the stock alert")
    assert read_management("unsubscribe me from the weekly report") == Management(
        "delete", "the weekly report"
    )


def test_create_arguments_carry_the_reading_not_the_text() -> None:
    request = read_standing_request("email me this every Monday at 8")
    assert request is not None
    assert request.refers_back
    calls = [{"tool": "metrics.query", "args": {"metric": "revenue", "group_by": ["branch"]}}]
    args = create_arguments(request, calls, question="revenue by branch", conversation_id="c1")  # type: ignore[arg-type]
    assert args == {"title": "revenue by branch", "question": "revenue by branch",
                    "calls": calls, "schedule": "0 8 * * 1", "channels": ["email"],
                    "conversation_id": "c1"}  # fmt: skip


def test_schedules_run_in_the_users_time_zone() -> None:
    sunday = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
    assert schedule.next_run("0 8 * * 1", "Africa/Nairobi", sunday) == dt.datetime(
        2026, 11, 30, 5, 0, tzinfo=dt.UTC
    )
    # Across a daylight-saving change: 08:00 in Berlin is 07:00 UTC in summer, 08:00 in winter.
    before = dt.datetime(2026, 10, 23, 12, 0, tzinfo=dt.UTC)
    assert schedule.next_run("0 8 * * 1", "Europe/Berlin", before) == dt.datetime(
        2026, 10, 26, 7, 0, tzinfo=dt.UTC
    )
    assert "Monday" in schedule.in_words("0 8 * * 1", "Africa/Nairobi")
    with pytest.raises(ToolInputError, match="five fields"):
        schedule.validate("every day")
    with pytest.raises(ToolInputError, match="not a time zone"):
        schedule.zone("Mars/Olympus")


def test_alert_conditions_read_the_tools_own_figures() -> None:
    metric = {"totals": [{"currency": "KES", "value": 42, "records": 3}], "rows": [{}]}
    assert figures(metric) == [{"value": "42", "unit": "KES"}]
    assert holds({"op": "<", "value": 50}, metric)
    assert not holds({"op": ">", "value": 50}, metric)
    assert holds({"op": "<", "value": 1}, {"totals": [], "rows": []})  # nothing in stock is 0
    assert holds({"on": "rows", "op": ">", "value": 0}, metric)
    assert figures({"count": 7, "definition": {}}) == [{"value": "7", "unit": ""}]


def test_the_tick_is_scheduled_from_the_settings_and_zero_is_off() -> None:
    assert subscription_schedule(Settings()) == {
        "subscriptions": {"task": RUN_SUBSCRIPTIONS, "schedule": 60.0, "options": {"expires": 60.0}}
    }
    off = Settings(subscriptions=SubscriptionSettings(tick_seconds=0))
    assert subscription_schedule(off) == {}
