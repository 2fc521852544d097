"""Relay turns: the agent loop runs here as a task; when it needs the ERP, the turn answers the
plugin with the call specifications it is waiting for and resumes when their results arrive.

    POST /api/relay/turns {user, message | confirm}      → {turn_id, status: calls, seq, calls}
    POST /api/relay/turns/{id}/results {user, seq, results} → calls again … or
                                                           {turn_id, status: final, response}

Protocol safety: every request carries the plugin's signed assertion of its user
(``relay.assertions``: HMAC with the organisation key, fresh, used once); a turn id is 192
random bits, bound to the organisation (its key) and the user; results must answer exactly the
calls of the latest batch (``seq``), once each: an unknown turn or call id, a replay, a
reordered or partial batch, another organisation's or user's turn, or an oversized result is
refused and changes nothing. Writes still happen only through a confirmed
proposal (``confirm``), and the plugin runs write calls only inside a confirmation.

A relay turn lives in the process that started it (route a turn's requests to one worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.channels.faults import user_message
from erp_agent.channels.markdown import blocks_markdown
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ErpAgentError, RelayProtocolError
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.policy import resolve_allowed_tools
from erp_agent.models.base import ChatModel
from erp_agent.relay.assertions import Assertions
from erp_agent.relay.client import CURRENT, RelayClient
from erp_agent.results.links import LinkBuilder
from erp_agent.runtime import Runtime

BATCH_SETTLE_SECONDS = 0.02  # calls made together (asyncio.gather) go out in one batch
SESSION_CACHE_SECONDS = 120.0
TURN_TTL_SECONDS = 600.0  # a turn whose plugin went away is dropped after this


@dataclass
class RelayTurn:
    id: str
    org: str
    user: str
    seq: int = 0
    counter: int = 0
    waiting: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = field(
        default_factory=dict
    )
    sent: set[str] = field(default_factory=set)  # the call ids of the batch out now
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[dict[str, Any]] | None = None
    touched: float = field(default_factory=time.monotonic)

    async def call(self, spec: dict[str, Any]) -> dict[str, Any]:
        self.counter += 1
        call_id = f"c{self.counter}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[call_id] = ({"id": call_id, **spec}, future)
        self.changed.set()
        try:
            return await future
        finally:
            self.waiting.pop(call_id, None)


class RelayHub:
    def __init__(
        self,
        runtime: Runtime,
        models: Callable[[Session], ChatModel],
        read_only: Callable[[], bool] | None = None,
    ) -> None:
        self.runtime = runtime
        self.models = models
        self.read_only = read_only or (lambda: runtime.settings.read_only)
        self.max_result_bytes = runtime.settings.relay_max_result_bytes
        # The ERPNext connector, speaking the relay protocol: no URL, no credential, no socket.
        self.connector = ERPNextConnector("", catalog=runtime.catalog)
        self.connector.client = RelayClient()
        self.gateway = Gateway(
            runtime.registry, runtime.store, self.connector, runtime.catalog,
            results=runtime.results,
        )  # fmt: skip
        self.links = LinkBuilder(self.connector.link, runtime.catalog, self.connector.name)
        # Who asks is the plugin's signed claim, fresh and used once (relay.assertions).
        self.assertions = Assertions(runtime.redis)
        self._turns: dict[str, RelayTurn] = {}
        self._finished: dict[str, tuple[str, float]] = {}  # turn id -> (org, when): replays
        self._sessions: dict[tuple[str, str], tuple[float, Session]] = {}

    # ------------------------------------------------------------ the two requests

    async def start(self, org: str, user: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self._expire()
        turn = RelayTurn(id=f"rt_{secrets.token_urlsafe(24)}", org=org, user=user)
        confirm = body.get("confirm")
        if isinstance(confirm, Mapping):
            work = self._confirm(
                turn, str(confirm.get("proposal_id", "")), str(confirm.get("payload_hash", ""))
            )
        else:
            message = str(body.get("message") or "").strip()
            if not message:
                raise RelayProtocolError(
                    "Send a message, or confirm with proposal_id and payload_hash."
                )
            conversation = body.get("conversation_id")
            work = self._ask(turn, message, str(conversation) if conversation else None)
        self._turns[turn.id] = turn
        context = contextvars_with(turn)
        turn.task = asyncio.get_running_loop().create_task(work, context=context)
        turn.task.add_done_callback(lambda _: turn.changed.set())
        return await self._settle(turn)

    async def resume(self, org: str, turn_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        turn = self._turns.get(turn_id)
        if turn is None and self._finished.get(turn_id, ("", 0.0))[0] == org:
            raise RelayProtocolError("This relay turn is finished; replayed results are refused.")
        if turn is None or turn.org != org:
            raise RelayProtocolError(f"There is no relay turn {turn_id} for this organisation.")
        if body.get("user") != turn.user:
            raise RelayProtocolError("These results are not from the user whose turn this is.")
        if not turn.sent:
            raise RelayProtocolError("No calls of this turn are waiting for results (a replay?).")
        if body.get("seq") != turn.seq:
            raise RelayProtocolError(
                f"These results answer batch {body.get('seq')!r}; batch {turn.seq} is waiting "
                "(replayed or out-of-order results are refused)."
            )
        results = body.get("results")
        if not isinstance(results, list):
            raise RelayProtocolError("results must be a list of {id, ok, data | error}.")
        by_id: dict[str, dict[str, Any]] = {}
        for result in results:
            call_id = result.get("id") if isinstance(result, dict) else None
            if call_id not in turn.sent:
                raise RelayProtocolError(
                    f"The call {call_id!r} is not waiting in batch {turn.seq}."
                )
            if call_id in by_id:
                raise RelayProtocolError(f"The call {call_id} was answered twice.")
            if len(json.dumps(result, default=str)) > self.max_result_bytes:
                raise RelayProtocolError(
                    f"The result of {call_id} is larger than {self.max_result_bytes:,} bytes; "
                    "ask a narrower question."
                )
            by_id[call_id] = result
        missing = sorted(turn.sent - set(by_id))
        if missing:
            raise RelayProtocolError(
                f"Batch {turn.seq} also needs results for {', '.join(missing)}."
            )
        turn.sent = set()
        turn.touched = time.monotonic()
        for call_id, result in by_id.items():
            _, future = turn.waiting[call_id]
            if not future.done():
                future.set_result(result)
        return await self._settle(turn)

    async def _settle(self, turn: RelayTurn) -> dict[str, Any]:
        """Run the turn until it waits for the ERP (the calls go out) or is done."""
        assert turn.task is not None
        while True:
            if turn.task.done():
                self._turns.pop(turn.id, None)
                self._finished[turn.id] = (turn.org, time.monotonic())
                try:
                    return {"turn_id": turn.id, "status": "final", **turn.task.result()}
                except ErpAgentError as exc:
                    message = user_message(exc)  # in words, never the store's address
                    return {"turn_id": turn.id, "status": "error", "message": message}
            if self._unsent(turn):
                await asyncio.sleep(BATCH_SETTLE_SECONDS)  # let the calls made together join
                batch = self._unsent(turn)
                if turn.task.done() or not batch:
                    continue
                turn.seq += 1
                turn.sent = set(batch)
                calls = [turn.waiting[i][0] for i in batch]
                return {"turn_id": turn.id, "status": "calls", "seq": turn.seq, "calls": calls}
            turn.changed.clear()
            if turn.task.done() or self._unsent(turn):
                continue
            await turn.changed.wait()

    @staticmethod
    def _unsent(turn: RelayTurn) -> list[str]:
        """Calls waiting for the plugin that are not out yet (answered ones are not waiting)."""
        ids = [i for i, (_, f) in turn.waiting.items() if not f.done() and i not in turn.sent]
        return sorted(ids, key=lambda c: int(c[1:]))

    # ------------------------------------------------------------ what a turn does

    async def _session(self, turn: RelayTurn) -> Session:
        key = (turn.org, turn.user)
        cached = self._sessions.get(key)
        if cached is not None and time.monotonic() - cached[0] < SESSION_CACHE_SECONDS:
            return cached[1]
        # The plugin runs every call in the ERP session of this user: there is no secret here.
        credential = Credential(user=turn.user, sid="relay")
        roles = frozenset(await self.connector.roles(credential))
        allowed = await resolve_allowed_tools(
            self.connector, credential, roles, self.runtime.registry, self.runtime.policy,
            read_only=self.read_only(),
        )  # fmt: skip
        digest = hashlib.sha256(f"{turn.org}\n{turn.user}".encode()).hexdigest()[:20]
        session = Session(
            id=f"relay_{digest}", user=turn.user, credential=credential, roles=roles,
            org=turn.org, allowed_tools=allowed, read_only=self.read_only(),
        )  # fmt: skip
        self._sessions[key] = (time.monotonic(), session)
        return session

    async def _ask(self, turn: RelayTurn, message: str, conversation: str | None) -> dict[str, Any]:
        session = await self._session(turn)
        engine = self.runtime.engine(self.models(session), gateway=self.gateway, links=self.links)
        if conversation:
            found = await self.runtime.store.get_conversation(conversation)
            if found is None or found.user != session.user or found.org != session.org:
                conversation = None  # never another user's conversation
        response = await engine.run_turn(session, message, conversation_id=conversation)
        payload = response.as_dict()
        return {"response": payload, "markdown": blocks_markdown(response.blocks)}

    async def _confirm(
        self, turn: RelayTurn, proposal_id: str, payload_hash: str
    ) -> dict[str, Any]:
        session = await self._session(turn)
        outcome = await self.gateway.confirm(session, proposal_id, payload_hash or None)
        view = outcome.for_model()
        view["message"], view["ok"] = outcome.message, outcome.ok
        tool = self.runtime.registry.get(outcome.tool)
        if outcome.ok and tool is not None and tool.entity and isinstance(outcome.data, dict):
            view["link"] = self.links.document(tool.entity, outcome.data)
        return {"outcome": view}

    def _expire(self) -> None:
        now = time.monotonic()
        for turn_id, (_, at) in list(self._finished.items()):
            if now - at > TURN_TTL_SECONDS:
                self._finished.pop(turn_id, None)
        for turn_id, turn in list(self._turns.items()):
            if now - turn.touched > TURN_TTL_SECONDS:
                self._turns.pop(turn_id, None)
                if turn.task is not None:
                    turn.task.cancel()

    async def aclose(self) -> None:
        for turn in self._turns.values():
            if turn.task is not None:
                turn.task.cancel()
        with contextlib.suppress(Exception):
            await self.connector.aclose()


def contextvars_with(turn: RelayTurn) -> contextvars.Context:
    """A copy of the current context in which the relay client sends this turn's calls."""
    context = contextvars.copy_context()
    context.run(CURRENT.set, turn)
    return context


__all__ = ["RelayHub", "RelayTurn"]
