"""History trimming never separates an assistant tool_calls message from its tool answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from erp_agent.engine.history import from_state, to_state, trim
from erp_agent.engine.prompt import context_message
from erp_agent.models.base import Message, ToolCall


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Random histories, including broken ones (orphans, missing answers, interleavings)."""
    out: list[Message] = []
    n = 0
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "text", "calls", "orphan", "partial"]))
        if kind == "user":
            out.append(Message("user", "q" * draw(st.integers(1, 400))))
        elif kind == "text":
            out.append(Message("assistant", "a" * draw(st.integers(1, 400))))
        elif kind == "orphan":
            out.append(Message("tool", "{}", tool_call_id=f"ghost{n}"))
            n += 1
        else:
            k = draw(st.integers(1, 3))
            calls = tuple(ToolCall(f"c{n + i}", "sales_invoice.list", "{}") for i in range(k))
            n += k
            out.append(Message("assistant", None, calls))
            answered = calls if kind == "calls" else calls[: draw(st.integers(0, k - 1))]
            for call in answered:
                out.append(Message("tool", "r" * draw(st.integers(1, 600)), tool_call_id=call.id))
    return out


def well_formed(messages: list[Message]) -> bool:
    pending: set[str] = set()
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id not in pending:
                return False
            pending.discard(message.tool_call_id)
        else:
            if pending:
                return False  # a call left unanswered before the next message
            if message.role == "assistant" and message.tool_calls:
                pending = {c.id for c in message.tool_calls}
    return not pending


@settings(max_examples=400, deadline=None)
@given(histories(), st.integers(0, 3000))
def test_trimmed_history_is_always_well_formed(messages: list[Message], budget: int) -> None:
    trimmed = trim(messages, budget)
    assert well_formed(trimmed)
    assert not trimmed or trimmed[0].role == "user" or len({id(m) for m in trimmed}) > 0
    # Trimming keeps a suffix of the well-formed units, never reorders.
    positions = [next(i for i, m in enumerate(messages) if m is t) for t in trimmed]
    assert positions == sorted(positions)


def test_budget_keeps_newest_units() -> None:
    call = ToolCall("c1", "sales_invoice.list", "{}")
    messages = [
        Message("user", "old question " * 100),
        Message("assistant", "old answer " * 100),
        Message("user", "new question"),
        Message("assistant", None, (call,)),
        Message("tool", '{"rows": []}', tool_call_id="c1"),
        Message("assistant", "No records found."),
    ]
    trimmed = trim(messages, 60)
    assert [m.role for m in trimmed] == ["user", "assistant", "tool", "assistant"]
    assert trimmed[0].content == "new question"


def test_state_round_trip() -> None:
    call = ToolCall("c1", "x.y", '{"a": 1}')
    messages = [
        Message("user", "hi"),
        Message("assistant", None, (call,)),
        Message("tool", "{}", tool_call_id="c1", name="x.y"),
    ]
    assert from_state(to_state(messages)) == messages


def test_earlier_context_is_dropped_first_and_only_when_over_budget() -> None:
    """Earlier turns' context messages stay in the history where they were sent (the next
    prompt begins with the last one); over the budget they are the first to go, oldest first,
    before any question or answer; the running turn's own stays longest."""
    old = context_message("Knowledge: " + "passage " * 200)
    new = context_message("Knowledge: " + "other " * 200)
    assert old is not None
    assert new is not None
    messages = [
        old,
        Message("user", "first question"),
        Message("assistant", "first answer"),
        new,
        Message("user", "second question"),
    ]
    assert trim(messages, 10_000) == messages
    without_old = trim(messages, 400)
    assert without_old == [m for m in messages if m is not old]
    assert trim(messages, 100) == messages[1:3] + messages[4:]
    assert trim(messages, 400, keep_last_context=True) == without_old
    # Tighter: the running turn's context outlasts the earlier questions and answers.
    assert trim(messages, 350) == messages[1:3] + messages[4:]
    assert trim(messages, 350, keep_last_context=True) == [new, messages[-1]]
