"""Turns a crash left ``running`` are never lost: continued from their last persisted step with
``Engine.continue_turn``, or — if that cannot be done — closed with a clear message. Either way a
proposal the turn had prepared is shown (with its status as it is now).

A turn is *orphaned* when no engine in this process is running it and its last step was saved
longer ago than the turn deadline (plus a margin): no process can still be running it then.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any, Protocol, cast

from erp_agent.engine.response import TurnResponse
from erp_agent.errors import ErpAgentError
from erp_agent.gateway.proposals import proposal_view
from erp_agent.models.base import Usage
from erp_agent.results.blocks import Block, ProposalBlock, proposal_block, text_block
from erp_agent.store.records import Turn

if TYPE_CHECKING:
    from erp_agent.calls.session import Session
    from erp_agent.config import EngineSettings
    from erp_agent.events import EventBus
    from erp_agent.store.base import Store

QUEUE = "queue"  # Turn.state["background"] of a turn the task queue runs (and recovers)
# Turns an engine of this process is running now (engines are made per request).
ACTIVE: set[str] = set()


class TurnRunner(Protocol):
    """What recovery needs of the engine (``engine.turn.Engine``, which runs this module's
    ``proposal_blocks`` and ``ACTIVE``): its store, its deadline and a turn continued."""

    store: Store
    settings: EngineSettings

    async def continue_turn(
        self, session: Session, turn_id: str, *, bus: EventBus | None = None
    ) -> TurnResponse: ...


MARGIN = dt.timedelta(seconds=10)
INTERRUPTED = (
    "This answer was interrupted: the server stopped while it was being prepared{why}. "
    "Nothing was written without your confirmation. Ask again if you still need it."
)


def orphan_age(turn_deadline: float) -> dt.timedelta:
    """How long a running turn must have been silent to be nobody's any more."""
    return dt.timedelta(seconds=turn_deadline) + MARGIN


def orphaned(turn: Turn, now: dt.datetime, age: dt.timedelta) -> bool:
    if turn.state.get("background") == QUEUE:
        return False  # the queue hands it to another worker; nobody else may run it too
    return turn.status == "running" and turn.id not in ACTIVE and now - turn.updated_at >= age


def prepared_proposals(turn: Turn) -> list[dict[str, Any]]:
    """The proposals the turn's tool calls made, as the tool messages recorded them."""
    found = []
    for message in turn.state.get("messages", []):
        if message.get("role") != "tool" or not message.get("content"):
            continue
        try:
            content = json.loads(message["content"])
        except (TypeError, json.JSONDecodeError):
            continue
        if isinstance(content, dict) and isinstance(content.get("proposal"), dict):
            found.append(content["proposal"])
    return found


async def proposal_blocks(store: Store, turn: Turn) -> list[ProposalBlock]:
    """The turn's proposals as response blocks, each with its status as it is now."""
    blocks = []
    for shown in prepared_proposals(turn):
        current = await store.get_proposal(str(shown.get("id")))
        # One the store no longer holds is shown as its tool message recorded it (JSON).
        blocks.append(
            proposal_block(proposal_view(current))
            if current
            else cast(ProposalBlock, {"type": "proposal", **shown})
        )
    return blocks


async def close(store: Store, turn: Turn, why: str = "") -> TurnResponse:
    """End the turn with a clear message (and the proposals it had prepared)."""
    text = INTERRUPTED.format(why=f" ({why.rstrip('.')})" if why else "")
    blocks: list[Block] = [text_block(text), *await proposal_blocks(store, turn)]
    response = TurnResponse(turn.id, turn.conversation_id, blocks, [], Usage(), "", "interrupted")
    turn.status = "failed"
    turn.state["response"] = response.as_dict()
    turn.updated_at = dt.datetime.now(dt.UTC)
    await store.save_turn(turn)
    return response


async def resume(
    engine: TurnRunner, session: Session, turn: Turn, bus: EventBus | None = None
) -> TurnResponse | None:
    """Continue the turn from its last persisted step; close it if that fails. None if another
    process finished it meanwhile."""
    try:
        return await engine.continue_turn(session, turn.id, bus=bus)
    except ErpAgentError as exc:
        stored = await engine.store.get_turn(turn.id)
        if stored is None or stored.status != "running":
            return None
        return await close(engine.store, stored, str(exc))


async def recover_conversation(
    engine: TurnRunner, session: Session, conversation_id: str, bus: EventBus | None = None
) -> list[TurnResponse]:
    """Before a new request on the conversation: finish the turns a crash left running."""
    now, age = dt.datetime.now(dt.UTC), orphan_age(engine.settings.turn_deadline)
    conversation = await engine.store.get_conversation(conversation_id)
    if conversation is None or conversation.user != session.user:
        return []
    finished = []
    for turn in await engine.store.turns(conversation_id):
        if orphaned(turn, now, age):
            response = await resume(engine, session, turn, bus)
            if response is not None:
                finished.append(response)
    return finished
