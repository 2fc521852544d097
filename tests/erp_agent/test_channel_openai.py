"""The OpenAI-compatible API driven by the official ``openai`` client against the running server
(uvicorn on a free port, the offline planner as the model): a figure that matches the ERP's
REST API, a branch manager refused another branch's invoice, a write that stays a proposal, and
clear errors for a wrong key or a deleted user's key."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from collections.abc import Iterator

import openai
import pytest
from channel_fixtures import (
    ADMIN,
    OwnERP,
    admin_client,
    agent,
    issue_key,
    own_erp,
    rest_names,
    revenue,
)  # fmt: skip
from server_doubles import LiveServer

from erp_agent.evals.score import figure_present

__all__ = ["agent", "own_erp"]


@pytest.fixture(scope="module")
def admin_api(agent: LiveServer) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(base_url=f"{agent.url}/v1", api_key=issue_key(agent.url, ADMIN))
    yield client
    client.close()


def _ask(client: openai.OpenAI, text: str) -> str:
    reply = client.chat.completions.create(
        model="erp-agent", messages=[{"role": "user", "content": text}]
    )
    return reply.choices[0].message.content or ""


def test_the_model_list_names_erp_agent(admin_api: openai.OpenAI) -> None:
    assert [m.id for m in admin_api.models.list()] == ["erp-agent"]


def test_a_figure_is_the_erps_own_streamed_and_not(
    admin_api: openai.OpenAI, own_erp: OwnERP
) -> None:
    truth = revenue(own_erp.url, dt.date.today().year)
    assert truth
    answer = _ask(admin_api, "What was our revenue this year?")
    assert all(figure_present(answer, v) for v in truth), (truth, answer[:600])
    stream = admin_api.chat.completions.create(
        model="erp-agent",
        messages=[{"role": "user", "content": "What was our revenue this year?"}],
        stream=True,
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert len([p for p in pieces if p]) > 1  # it arrived in pieces, not one block at the end
    streamed = "".join(pieces)
    assert all(figure_present(streamed, v) for v in truth), (truth, streamed[:600])


def test_a_follow_up_continues_the_conversation(admin_api: openai.OpenAI, own_erp: OwnERP) -> None:
    year = dt.date.today().year
    first = _ask(admin_api, "What was our revenue this year?")
    reply = admin_api.chat.completions.create(
        model="erp-agent",
        messages=[
            {"role": "user", "content": "What was our revenue this year?"},
            {"role": "assistant", "content": first},
            {"role": "user", "content": "and last year?"},
        ],
    )
    answer = reply.choices[0].message.content or ""
    last_year = revenue(own_erp.url, year - 1)
    assert all(figure_present(answer, v) for v in last_year), (last_year, answer[:600])


def test_a_branch_manager_is_refused_another_branchs_invoice(
    agent: LiveServer, own_erp: OwnERP
) -> None:
    conn = sqlite3.connect(own_erp.path)
    (mombasa,) = conn.execute(
        "select name from `tabSales Invoice` where branch = 'Mombasa' and docstatus = 1 limit 1"
    ).fetchone()
    conn.close()
    client = openai.OpenAI(
        base_url=f"{agent.url}/v1", api_key=issue_key(agent.url, "kisumu.manager@demo.local")
    )
    answer = _ask(client, f"Show me {mombasa}")
    client.close()
    assert "does not have access to this document" in answer, answer[:600]  # the ERP's words
    grand_total = (
        sqlite3.connect(own_erp.path)
        .execute("select grand_total from `tabSales Invoice` where name = ?", (mombasa,))
        .fetchone()[0]
    )
    assert not figure_present(answer, grand_total), answer[:600]


def test_a_write_is_only_proposed_with_a_confirm_link(
    admin_api: openai.OpenAI, agent: LiveServer, own_erp: OwnERP
) -> None:
    name = "Channel Prospect Okoth"
    answer = _ask(admin_api, f"Create a lead called {name}")
    assert "Proposed change (not written)" in answer, answer[:600]
    assert f"{agent.url}/?proposal=prop_" in answer, answer[:600]
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]]) == []
    # The link opens it in the web app, where its owner (and only they) confirm it.
    proposal_id = re.search(r"\?proposal=(prop_[\w-]+)", answer).group(1)  # type: ignore[union-attr]
    other = admin_client(agent.url, "sales@demo.local")
    assert other.get(f"/api/proposals/{proposal_id}").status_code == 404
    other.close()
    web = admin_client(agent.url)
    shown = web.get(f"/api/proposals/{proposal_id}").json()
    done = web.post(
        f"/api/proposals/{proposal_id}/confirm", json={"payload_hash": shown["payload_hash"]}
    )
    web.close()
    assert done.json()["ok"], done.text
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]])


def test_a_wrong_key_and_a_deleted_users_key_are_refused_in_words(
    agent: LiveServer, own_erp: OwnERP
) -> None:
    wrong = openai.OpenAI(base_url=f"{agent.url}/v1", api_key="eak_not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="not valid or was revoked"):
        wrong.models.list()
    key = issue_key(agent.url, "employee@demo.local")
    conn = sqlite3.connect(own_erp.path)
    conn.execute("delete from `tabUser` where name = 'employee@demo.local'")
    conn.commit()
    conn.close()
    gone = openai.OpenAI(base_url=f"{agent.url}/v1", api_key=key, max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="no longer accepts"):
        _ask(gone, "What was our revenue this year?")


def test_an_unknown_model_is_the_apis_own_error(admin_api: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        admin_api.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
