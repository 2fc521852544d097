"""Property: no sequence of model-issued calls executes a write without a matching confirm by
the same user, of exactly the proposed payload, once, before it expires."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

from gateway_doubles import make_gateway, session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from erp_agent.calls.outcome import Status
from erp_agent.gateway.proposals import payload_hash

USERS = ["amina@demo.local", "mallory@demo.local"]
TOOLS = ["lead.create", "lead.delete", "sales_invoice.list", "payroll.run", "lead.confirm"]

arg_values = st.one_of(
    st.text(max_size=5), st.integers(-3, 3), st.none(), st.floats(allow_nan=False, width=32)
)
args = st.one_of(
    st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)}),  # a valid write, often
    st.dictionaries(
        st.sampled_from(["name", "amount", "customer", "extra"]), arg_values, max_size=3
    ),
    st.lists(st.integers(), max_size=2),
)
actions = st.lists(
    st.one_of(
        st.tuples(
            st.just("call"), st.integers(0, 1), st.integers(0, 1), st.sampled_from(TOOLS), args
        ),
        st.tuples(
            st.just("confirm"),
            st.integers(0, 1),
            st.integers(0, 1),
            st.integers(0, 6),
            st.sampled_from(["none", "right", "wrong"]),
        ),
        st.tuples(st.just("reject"), st.integers(0, 1), st.integers(0, 6)),
        st.tuples(st.just("tamper"), st.integers(0, 6)),
        st.tuples(st.just("advance"), st.integers(1, 20)),
    ),
    max_size=25,
)


async def run(steps: list[tuple[Any, ...]]) -> None:
    now = [dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)]
    gateway, erp, store = make_gateway(clock=lambda: now[0], proposal_ttl=dt.timedelta(minutes=15))
    sessions = {(u, s): session(USERS[u], f"s{s}") for u in (0, 1) for s in (0, 1)}
    proposals: list[dict[str, Any]] = []  # what each proposal was, as first prepared
    confirmed: list[tuple[str, dict[str, Any]]] = []  # (user, payload) of every OK confirm
    for step in steps:
        kind = step[0]
        if kind == "call":
            _, user, sid, tool, arguments = step
            executed_before = len(erp.executed)
            outcome = await gateway.call(sessions[(user, sid)], tool, arguments)
            assert len(erp.executed) == executed_before, "a call alone must never write"
            if outcome.status is Status.PROPOSAL:
                assert outcome.proposal is not None
                proposals.append(
                    {**outcome.proposal, "user": USERS[user], "sid": f"s{sid}", "at": now[0]}
                )
        elif kind == "confirm":
            _, user, sid, ref, hash_choice = step
            target = proposals[ref] if ref < len(proposals) else None
            pid = target["id"] if target else f"prop_missing_{ref}"
            expected = None
            if target and hash_choice == "right":
                expected = target["payload_hash"]
            elif hash_choice == "wrong":
                expected = payload_hash("lead.create", {"name": "forged"})
            outcome = await gateway.confirm(sessions[(user, sid)], pid, expected)
            if outcome.status is Status.OK:
                assert target is not None
                assert target["user"] == USERS[user]
                assert target["sid"] == f"s{sid}"
                assert now[0] < target["at"] + dt.timedelta(minutes=15)
                confirmed.append((USERS[user], target["payload"]))
        elif kind == "reject":
            _, user, ref = step
            if ref < len(proposals):
                await gateway.reject(sessions[(user, 0)], proposals[ref]["id"])
        elif kind == "tamper":
            ref = step[1]
            if ref < len(proposals):
                store._proposals[proposals[ref]["id"]].payload["name"] = "tampered"
        else:
            now[0] += dt.timedelta(minutes=step[1])
    # Every write the ERP saw is exactly one successful confirm, by the owner, of the original payload.
    assert erp.executed == confirmed
    ids = [p["id"] for p in proposals]
    assert len(ids) == len(set(ids))
    assert all(p["payload"].get("name") != "tampered" for p in proposals)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions)
def test_no_write_without_a_matching_confirm(steps: list[tuple[Any, ...]]) -> None:
    asyncio.run(run(steps))
