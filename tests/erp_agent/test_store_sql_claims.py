"""Two confirms racing for one proposal: the database lets exactly one claim it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from erp_agent.store.records import Proposal, ProposalStatus
from erp_agent.store.sql_store import SQLStore

pytestmark = pytest.mark.anyio


@pytest.fixture
async def two_stores(tmp_path: Path) -> AsyncIterator[tuple[SQLStore, SQLStore]]:
    """Two stores on one file: two engines, so claims race on separate connections."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}"
    first, second = SQLStore(url), SQLStore(url)
    await first.migrate()
    yield first, second
    await first.close()
    await second.close()


def pending(id: str) -> Proposal:
    return Proposal(
        id=id, user="amina", session_id="s1", org="Demo", tool="lead.create",
        payload={"name": "X"}, payload_hash="h", summary="Create lead X",
    )  # fmt: skip


async def test_two_concurrent_claims_on_separate_connections_one_wins(
    two_stores: tuple[SQLStore, SQLStore],
) -> None:
    first, second = two_stores
    await first.add_proposal(pending("p1"))
    won = await asyncio.gather(first.claim_proposal("p1"), second.claim_proposal("p1"))
    assert sorted(won) == [False, True]
    claimed = await second.get_proposal("p1")
    assert claimed is not None
    assert claimed.status is ProposalStatus.EXECUTING


async def test_many_racing_claims_per_proposal_leave_one_winner_each(
    two_stores: tuple[SQLStore, SQLStore],
) -> None:
    first, second = two_stores
    ids = [f"p{n}" for n in range(5)]
    for id in ids:
        await first.add_proposal(pending(id))
    # Both engines, several pooled connections each, all at once.
    attempts = [(store, id) for id in ids for store in (first, second, first, second)]
    results = await asyncio.gather(*(store.claim_proposal(id) for store, id in attempts))
    wins: dict[str, int] = {}
    for (_, id), won in zip(attempts, results, strict=True):
        wins[id] = wins.get(id, 0) + won
    assert wins == dict.fromkeys(ids, 1)


async def test_a_finished_proposal_cannot_be_claimed(two_stores: tuple[SQLStore, SQLStore]) -> None:
    first, second = two_stores
    await first.add_proposal(pending("p1"))
    await first.finish_proposal("p1", ProposalStatus.REJECTED)
    assert await second.claim_proposal("p1") is False


async def test_an_in_memory_store_serves_concurrent_callers() -> None:
    # In memory there is one shared connection; the store must not interleave transactions.
    store = SQLStore("sqlite+aiosqlite://")
    try:
        await store.migrate()
        await asyncio.gather(*(store.add_proposal(pending(f"p{n}")) for n in range(5)))
        assert len(await store.list_proposals()) == 5
        won = await asyncio.gather(*(store.claim_proposal("p1") for _ in range(4)))
        assert sorted(won) == [False, False, False, True]
    finally:
        await store.close()
