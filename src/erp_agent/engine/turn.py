"""One turn, readable as the request lifecycle:

    authenticate → load history (trimmed) → select tools → assemble the prompt → add context
    → call the model → guards → gateway → append results → loop → render → log

The turn's state is saved in the store after every step, so another process can continue it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.config import EngineSettings
from erp_agent.engine import _tools, guards, history, interrupted, prompt
from erp_agent.engine import conversation as conv
from erp_agent.engine._persist import (
    finished_event,
    open_conversation,
    save_conversation_state,
    save_turn,
)
from erp_agent.engine._run import Run
from erp_agent.engine._steps import (
    context_text,
    model_error_text,
    progress_event,
    too_many_failures,
    tool_results,
    write_origin,
)
from erp_agent.engine.response import TurnResponse
from erp_agent.engine.routing import Router
from erp_agent.errors import ModelContextTooLong, ModelError, StoreError
from erp_agent.events import (
    AsyncListener,
    EventBus,
    GuardTriggered,
    Listener,
    ModelCalled,
    TextDelta,
    Thinking,
    ToolFinished,
)
from erp_agent.gateway.gateway import TURN_BUS, TURN_ID, Gateway
from erp_agent.models.base import ChatModel, Completion, Message, ToolCall
from erp_agent.results.blocks import Block, text_block
from erp_agent.results.links import LinkBuilder, live_text
from erp_agent.results.render import materialise
from erp_agent.results.shaping import ResultShaper, citations_block
from erp_agent.results.store import ResultStore
from erp_agent.results.text import separate_lists
from erp_agent.store.base import Store
from erp_agent.store.records import Turn
from erp_agent.tools.base import Effect

# (the request, the session, a budget in tokens, the context messages already in the
# conversation's history) → the text to add to this turn's context message
ContextProvider = Callable[[str, Session, int, str], Awaitable[str]]
RECENT_TURNS = 3
CONTEXT_SHARE = 20  # at most a twentieth of the model's context goes to knowledge passages


class Engine:
    def __init__(
        self,
        *,
        gateway: Gateway,
        model: ChatModel,
        router: Router,
        catalog: Catalog,
        store: Store,
        links: LinkBuilder,
        results: ResultStore,
        settings: EngineSettings | None = None,
        context_providers: Sequence[ContextProvider] = (),
        site_prompt: str = "",
        listeners: Sequence[Listener] = (),
        async_listeners: Sequence[AsyncListener] = (),
    ) -> None:
        self.gateway = gateway
        self.model = model
        self.router = router
        self.catalog = catalog
        self.store = store
        self.links = links
        self.results = results
        self.shaper = ResultShaper(gateway.registry, results)
        self.settings = settings or EngineSettings()
        self.context_providers = list(context_providers)
        self.site_prompt = site_prompt  # the deployment's own prompt sections
        # Subscribers of every turn's events, whichever channel runs it (the interaction log,
        # usage, metrics); the channel adds its own (progress) to the bus it passes.
        self.listeners = list(listeners)
        self.async_listeners = list(async_listeners)
        self.scopes = _tools.Scopes(gateway.connector)
        gateway.results = results

    # ------------------------------------------------------------ lifecycle

    async def run_turn(
        self,
        session: Session,
        message: str,
        *,
        conversation_id: str | None = None,
        bus: EventBus | None = None,
        turn_id: str | None = None,
    ) -> TurnResponse:
        """``turn_id``: a turn queued under that id (``queue.submit``) starts here."""
        bus = bus or EventBus()
        session = await self.gateway.within_plan(session)  # the organisation's plan narrows
        conversation = await open_conversation(self.store, session, conversation_id, message)
        self._attach(bus, conversation.id, session)
        new = conversation.id != conversation_id  # just created: no turns, no state to read
        past = (
            [] if new else [t for t in await self.store.turns(conversation.id) if t.id != turn_id]
        )
        queued = await self.store.get_turn(turn_id) if turn_id else None
        turn = Turn(
            id=turn_id or f"turn_{secrets.token_urlsafe(10)}",
            conversation_id=conversation.id,
            seq=queued.seq if queued else len(past) + 1,
            user_message=message,
        )
        if queued is not None:  # its tries (poison turns) and who recovers it (the queue)
            for key in ("attempts", "background"):
                if key in queued.state:
                    turn.state[key] = queued.state[key]
        state: conv.ConversationState = {} if new else await conv.load(self.store, conversation.id)
        route = self.router.route(message, session, conv.route_extra(state))
        if past:  # a follow-up: the same prompt prefix, so the model's server can cache it
            has_result = bool(state.get("last_query") or state.get("last_shown"))
            route = self.router.follow(route, past[-1].state, session, has_result=has_result)
        if self.model.profile.reads_every_tool:
            route.offered = self.router.everything(session)
        budget = self.settings.history_budget_tokens
        if past and route.offered != past[-1].state.get("offered"):
            # Tools appended: everything after the earlier tools is read again anyway, so the
            # history is cut now (to a third), and is then the same for several turns.
            budget = min(budget, history.window_size(past) // 2, budget // 3) or budget // 3
        history_since = history.window_start(past, budget)
        earlier = _earlier([t for t in past if t.seq >= history_since])
        trimmed = history.trim(earlier, self.settings.history_budget_tokens)
        run = Run(turn, session, [*trimmed, Message("user", message)], route.offered, route.modules)
        run.past = list(past)
        run.conversation = state
        run.said = _said(past, message)
        run.previous_prefix = past[-1].state.get("prefix_hash") if past else None
        run.context_since = _context_since(past)
        # The conversation-state tier: what the last few turns were about, so "it" and "that
        # invoice" resolve without re-reading the whole history.
        recent = [tuple(d) for t in past[-RECENT_TURNS:] for d in t.state.get("document_ids", [])]
        run.turn.state.update({
            # Knowledge passages for a process question, or a first question naming nothing
            # the catalog knows (a follow-up's words are about what came before).
            "asked_for_change": route.wants_write,
            "knowledge": route.knowledge or (not past and not route.named_modules),
            "history_len": len(trimmed), "history_since": history_since, "modules": route.modules,
            "named_modules": [] if route.figure and not route.records else route.named_modules,
            "entities": route.entities, "document_ids": route.document_ids,
            "recent_documents": [d for d in dict.fromkeys(recent) if d not in route.document_ids],
            "recent_entities": list(dict.fromkeys(e for t in past[-RECENT_TURNS:] for e in t.state.get("entities", []))),
        })  # fmt: skip
        await save_turn(self.store, run)
        return await self._loop(run, bus)

    async def continue_turn(
        self, session: Session, turn_id: str, *, bus: EventBus | None = None
    ) -> TurnResponse:
        """Pick up a turn another process left running (it crashed or was stopped mid-turn).

        Everything needed is in the stored turn: its messages so far, the tools offered, the
        modules matched. Tool calls already answered are not run again.
        """
        turn = await self.store.get_turn(turn_id)
        if turn is None or turn.status != "running":
            raise StoreError(f"Turn {turn_id} is not a running turn that can be continued.")
        conversation = await self.store.get_conversation(turn.conversation_id)
        if conversation is None or conversation.user != session.user:
            raise StoreError(f"Turn {turn_id} does not belong to {session.user}.")
        bus = bus or EventBus()
        session = await self.gateway.within_plan(session)
        self._attach(bus, conversation.id, session)
        past = [t for t in await self.store.turns(turn.conversation_id) if t.seq < turn.seq]
        since = int(turn.state.get("history_since", 0))
        earlier = _earlier(
            [t for t in past if t.seq >= since], int(turn.state.get("context_since", 0))
        )
        trimmed = history.trim(earlier, self.settings.history_budget_tokens)
        turn.state["history_len"] = len(trimmed)
        this_turn = history.from_state(turn.state.get("messages", []))
        run = Run(
            turn,
            session,
            [*trimmed, *this_turn],
            list(turn.state.get("offered", [])),
            list(turn.state.get("modules", [])),
        )
        # An assistant message whose tool calls were not all answered is dropped and asked again.
        run.messages = [*trimmed, *[m for unit in history.units(this_turn) for m in unit]]
        run.conversation = await conv.load(self.store, turn.conversation_id)
        run.said = _said(past, turn.user_message)
        run.previous_prefix = past[-1].state.get("prefix_hash") if past else None
        run.context_since = _context_since(past)
        run.sources.extend(tool_results(this_turn))
        # A proposal the turn had prepared is shown again, with its status as it is now.
        run.blocks.extend(await interrupted.proposal_blocks(self.store, turn))
        return await self._loop(run, bus)

    def _attach(self, bus: EventBus, conversation_id: str, session: Session) -> None:
        bus.attach(self.listeners, self.async_listeners)
        bus.bind(conversation_id=conversation_id, user=session.user, org=session.org)

    async def _loop(self, run: Run, bus: EventBus) -> TurnResponse:
        """The rounds, under one deadline for the whole turn: a slow ERP or model (each with
        its own retries) cannot hold the user for minutes. When time runs out the user gets
        what was found so far (tables, charts, proposals already made) and says so."""
        deadline = self.settings.turn_deadline
        interrupted.ACTIVE.add(run.turn.id)
        turn_token = TURN_ID.set(run.turn.id)  # the gateway's audit events name this turn
        bus_token = TURN_BUS.set(bus)  # and go to its stream
        try:
            async with asyncio.timeout(deadline):
                return await self._rounds(run, bus)
        except TimeoutError:
            doing = f" while {run.waiting_for}" if run.waiting_for else ""
            slow = "the AI model" if "model" in run.waiting_for else "the ERP"
            text = (
                f"I stopped after {deadline:g} seconds{doing}, before I could finish this "
                "answer. Anything below was found before that; nothing was written. Please "
                f"try again in a moment, or ask a narrower question. If {slow} is often this "
                "slow (for example a self-hosted model), an administrator can raise "
                "ERP_AGENT_TURN_DEADLINE."
            )
            return await self._finish(run, bus, text, "stopped")
        finally:
            TURN_BUS.reset(bus_token)
            TURN_ID.reset(turn_token)
            interrupted.ACTIVE.discard(run.turn.id)

    async def _rounds(self, run: Run, bus: EventBus) -> TurnResponse:
        run.waiting_for = "waiting for the AI model (its context window)"
        await self.model.prepare()  # the endpoint's own word on its context window, once
        run.waiting_for = "waiting for the ERP (your permissions)"
        run.scope = await self.scopes.of(run.session)
        run.waiting_for = "gathering context"
        if "context_since" not in run.turn.state:
            self._prompt(run)
            self._keep_earlier_context(run)
        await self._add_context(run)
        for round_no in range(1, self.settings.max_rounds + 1):
            before = run.turn.state.get("prefix_hash")
            system = self._prompt(run)
            if round_no > 1 and run.turn.state.get("prefix_hash") != before:
                self._cut_history(run)
            bus.emit(Thinking(run.turn.id, round=round_no))
            run.waiting_for = "waiting for the AI model"
            step_started = time.perf_counter()
            try:
                completion = await self._complete(run, system, list(run.shown_tools.values()), bus)
            except ModelError as exc:
                return await self._finish(run, bus, model_error_text(exc), "error")
            run.usage = run.usage + completion.usage
            run.model_name = completion.model or run.model_name
            bus.emit(
                ModelCalled(
                    run.turn.id,
                    model=run.model_name,
                    prompt_tokens=completion.usage.prompt_tokens,
                    cached_tokens=completion.usage.cached_tokens,
                    completion_tokens=completion.usage.completion_tokens,
                    latency_ms=_ms(step_started),
                    tool_calls=len(completion.tool_calls),
                )
            )
            run.log_steps.append(
                {
                    "step": "model",
                    "round": round_no,
                    "ms": _ms(step_started),
                    "tool_calls": len(completion.tool_calls),
                }
            )
            if completion.tool_calls:
                run.messages.append(completion.as_message())
                stop = await self._run_calls(run, bus, completion.tool_calls)
                if stop:
                    return await self._finish(run, bus, stop, "stopped")
                continue
            answer = completion.content or ""
            missing = guards.unsupported_figures(
                answer,
                guards.numbers_in(run.sources + tool_results(run.messages)),
                run.turn.user_message,
            )
            if missing and not run.provenance_retry_done:
                run.provenance_retry_done = True
                bus.emit(GuardTriggered(run.turn.id, guard="provenance", detail=", ".join(missing)))
                run.messages.append(Message("assistant", answer))
                run.messages.append(Message("user", (
                    "Check your answer: these figures do not appear in any tool result: "
                    f"{', '.join(missing)}. Correct them using tool results (or the calculator), or remove them."
                )))  # fmt: skip
                await save_turn(self.store, run)
                continue
            if missing:
                answer += "\n\n⚠ Not verified against ERP data: " + ", ".join(missing)
            run.messages.append(Message("assistant", answer))
            return await self._finish(
                run,
                bus,
                answer,
                "proposal" if any(b["type"] == "proposal" for b in run.blocks) else "answered",
            )
        return await self._finish(
            run,
            bus,
            "I could not finish this within the allowed number of steps. Try a more specific question.",
            "stopped",
        )

    def _prompt(self, run: Run) -> list[Message]:
        """This round's system messages and offered tools (each as this user is shown it, kept
        in ``run.shown_tools``); the turn's state keeps a hash of everything the request sends
        before the conversation (the next turn compares it)."""
        offered_tools = [
            t for t in (self.gateway.registry.get(n) for n in run.offered) if t is not None
        ]
        for tool in offered_tools:
            if tool.name not in run.shown_tools:
                run.shown_tools[tool.name] = tool.schema(run.session, dict(run.scope))
        run.shown_tools = {t.name: run.shown_tools[t.name] for t in offered_tools}
        parts = prompt.build(
            run.session, self.settings.today or dt.date.today(), self.site_prompt, run.scope
        )
        run.turn.state["prompt_hash"] = hashlib.sha256(parts.stable.encode()).hexdigest()[:16]
        system = [
            Message("system", parts.stable, cache_breakpoint=True),
            Message("system", parts.session),
        ]
        digests = [_tools.digest(schema) for schema in run.shown_tools.values()]
        before = json.dumps([[m.content for m in system], digests])
        run.turn.state["prefix_hash"] = hashlib.sha256(before.encode()).hexdigest()[:16]
        return system

    def _keep_earlier_context(self, run: Run) -> None:
        """Earlier turns' context messages stay in the history only while the request's part
        before the conversation (system messages, tools) is the previous turn's byte for byte:
        then a server's prefix cache holds through them. A follow-up that adds a tool or a
        module breaks the prefix before the history anyway, so they are left out (fewer tokens
        read again), from now on (``context_since``)."""
        since = run.context_since
        if run.previous_prefix is not None and run.previous_prefix != run.turn.state["prefix_hash"]:
            start = run.turn.state.get("history_len", 0)
            kept = [m for m in run.messages[:start] if not prompt.is_context(m)]
            run.messages = [*kept, *run.messages[start:]]
            run.turn.state["history_len"] = len(kept)
            since = run.turn.seq
        run.turn.state["context_since"] = since

    def _cut_history(self, run: Run) -> None:
        """Tools were appended within the turn: what follows the earlier tools is read again
        anyway, so the earlier turns are cut to a third of the history budget now (and the
        next turns start from the same place)."""
        if not run.past:
            return
        since = history.window_start(run.past, self.settings.history_budget_tokens // 3)
        if since <= int(run.turn.state.get("history_since", 0)):
            return
        context_since = int(run.turn.state.get("context_since", 0))
        earlier = _earlier([t for t in run.past if t.seq >= since], context_since)
        kept = history.trim(earlier, self.settings.history_budget_tokens)
        start = run.turn.state.get("history_len", 0)
        run.messages = [*kept, *run.messages[start:]]
        run.turn.state.update({"history_len": len(kept), "history_since": since})

    async def _complete(
        self, run: Run, system: list[Message], tools: list[dict[str, Any]], bus: EventBus
    ) -> Completion:
        def request() -> list[Message]:
            return [*system, *run.messages]

        async def streamed() -> Completion:
            # The model's text reaches every channel as it arrives (the ``delta`` events); the
            # final response block replaces it once the turn is done.
            async for delta in self.model.stream(request(), tools):
                if delta.text:
                    bus.emit(TextDelta(run.turn.id, text=delta.text))
                if delta.done is not None:
                    return delta.done
            raise ModelError("The AI model's stream ended without a completion.")

        try:
            return await streamed()
        except ModelContextTooLong:
            # Trim harder once: keep only the newest whole units within half the budget
            # (earlier turns' context messages go first, this turn's context stays longest).
            kept = history.trim(
                run.messages, self.settings.history_budget_tokens // 2, keep_last_context=True
            )
            mine = {id(m) for m in run.messages[run.turn.state.get("history_len", 0) :]}
            run.turn.state["history_len"] = sum(1 for m in kept if id(m) not in mine)
            run.messages = kept
            try:
                return await streamed()
            except ModelContextTooLong as exc:
                raise ModelContextTooLong(
                    "This conversation is too long for the model. Start a new conversation."
                ) from exc

    # ------------------------------------------------------------ tools

    async def _run_calls(self, run: Run, bus: EventBus, calls: Sequence[ToolCall]) -> str | None:
        """Run the model's tool calls through the guards and the gateway; a reason to stop, or
        None once every answer is saved."""
        saved = False
        for call in calls:
            saved = False
            step_started = time.perf_counter()
            try:
                arguments = json.loads(call.arguments or "{}")
            except json.JSONDecodeError as exc:
                self._answer(
                    run,
                    call,
                    {
                        "status": "invalid",
                        "message": f"The arguments are not valid JSON ({exc.msg} at {exc.pos}); send a JSON object.",
                    },
                )
                if guards.record_result(run.guard, ok=False):
                    return too_many_failures()
                continue
            tool = self.gateway.registry.get(call.name)
            if tool is not None:
                arguments = _tools.with_defaults(tool, run.shown_tools.get(call.name), arguments)
            refusal = guards.check_call(run.guard, call.name, arguments, run.offered)
            run.tools_called.append({"name": call.name, "arguments": arguments})
            if refusal:
                bus.emit(GuardTriggered(run.turn.id, guard="call", detail=refusal))
                self._answer(run, call, {"status": "refused", "message": refusal})
                if guards.record_result(run.guard, ok=False):
                    return too_many_failures()
                continue
            bus.emit(
                progress_event(
                    self.gateway.registry, self.catalog, run.turn.id, call.name, arguments
                )
            )
            run.waiting_for = f"waiting for the ERP ({call.name})"
            writes = tool is not None and tool.effect is Effect.WRITE
            outcome = await self.gateway.call(
                run.session, call.name, arguments, conversation_id=run.turn.conversation_id,
                origin=write_origin(self.gateway.registry, self.catalog, run) if writes else None,
                today=self.settings.today,
            )  # fmt: skip
            content = await self._after_call(run, call.name, arguments, outcome)
            self._answer(run, call, content)
            # Saved at once: a worker that dies after this call resumes past it, never
            # running it again.
            await save_turn(self.store, run)
            saved = True
            bus.emit(
                ToolFinished(
                    run.turn.id,
                    tool=call.name,
                    status=str(outcome.status),
                    latency_ms=_ms(step_started),
                )
            )
            run.log_steps.append(
                {
                    "step": "tool",
                    "tool": call.name,
                    "status": str(outcome.status),
                    "ms": _ms(step_started),
                }
            )
            ok = outcome.status in (Status.OK, Status.PROPOSAL)
            if guards.record_result(run.guard, ok=ok):
                return too_many_failures()
        if not saved:  # the last answer was a refusal or bad arguments, not yet kept
            await save_turn(self.store, run)
        return None

    async def _after_call(
        self, run: Run, name: str, arguments: Any, outcome: Outcome
    ) -> dict[str, Any]:
        """Shape the outcome (the results layer decides; the loop knows no tool names) and keep
        what this turn needs of it: blocks to show, tools it enabled, figures it can quote."""
        shaped = await self.shaper.shape(run.session, outcome)
        for block in shaped.blocks:
            # A proposal block carries its content warning as stored (``gateway/origin.py``).
            if block["type"] == "choices" and any(b["type"] == "choices" for b in run.blocks):
                continue  # one question at a time
            run.blocks.append(block)
        run.shown = shaped.shown or run.shown
        run.offered.extend(n for n in shaped.offer if n not in run.offered)
        run.citations.extend(shaped.citations)
        scope = _tools.scope_note(self.gateway.registry.get(name), run.scope, shaped.content)
        if scope:  # what the result was read within, beside what it holds
            shaped.content = {**shaped.content, "scope": scope}
        if shaped.stored:
            run.sources.append(shaped.data)
            if shaped.definition and run.tools_called:
                # Every figure says how it was computed: the definition goes with the response.
                run.tools_called[-1]["definition"] = shaped.definition
            if conv.is_query(name):
                run.queries.append(
                    conv.query_record(name, arguments, shaped.result_id, shaped.data)
                )
        return shaped.content

    def _answer(self, run: Run, call: ToolCall, content: dict[str, Any]) -> None:
        run.messages.append(
            Message("tool", json.dumps(content, default=str), tool_call_id=call.id, name=call.name)
        )

    # ------------------------------------------------------------ context, render, persistence

    async def _add_context(self, run: Run) -> None:
        """This turn's context message, just before its request, kept with the turn's messages
        (the next turn's prompt then begins with this one's). A turn continued by another
        process already has it."""
        start = run.turn.state.get("history_len", 0)
        given = "\n".join(m.content or "" for m in run.messages[:start] if prompt.is_context(m))
        if not any(prompt.is_context(m) for m in run.messages[start:]):
            made = prompt.context_message(await self._context(run, given))
            if made is not None:
                run.messages.insert(start, made)
        # Figures quoted from the context, this turn's or an earlier one still in the history,
        # are traceable too.
        run.sources.extend(m.content for m in run.messages if prompt.is_context(m))

    async def _context(self, run: Run, given: str) -> str:
        """``given``: the context messages already in the history (passages in them are not
        sent again)."""
        # A model with a small context (a self-hosted 8k one) gets a share of it for passages
        # in proportion, so the routed tools still fit beside them.
        budget = min(
            self.settings.context_budget_tokens,
            self.model.profile.context_window // CONTEXT_SHARE,
        )
        # Passages for a question about how things work (or one no business word names); a
        # question for figures or records is answered by its tools.
        provided = (
            [
                await provider(run.turn.user_message, run.session, budget, given)
                for provider in self.context_providers
            ]
            if run.turn.state.get("knowledge", True)
            else []
        )
        # The notes of the module the request is most about (figures carry their own
        # definitions); one already in the history is not sent again.
        notes = prompt.module_notes((run.turn.state.get("named_modules") or [])[:1])
        if notes and notes not in given:
            provided.append(notes)
        return context_text(run.turn.state, run.conversation, provided)

    async def _finish(self, run: Run, bus: EventBus, text: str, outcome: str) -> TurnResponse:
        # Ids are linked only where the ERP returned them (not a knowledge article's example).
        live = live_text(run.messages, self.shaper.registry, run.conversation.get("documents"))
        blocks: list[Block] = [text_block(self.links.in_text(separate_lists(text), live))]
        for block in run.blocks:
            blocks.append(
                await materialise(
                    block, self.results, run.session.user, self.links.document, self.catalog
                )
            )
        if run.citations:
            blocks.append(citations_block(run.citations))
        response = TurnResponse(
            run.turn.id,
            run.turn.conversation_id,
            blocks,
            run.tools_called,
            run.usage,
            run.model_name,
            outcome,
        )
        run.turn.status = "done" if outcome != "error" else "failed"
        run.turn.state["response"] = response.as_dict()
        run.turn.state["log"] = {
            "prompt_hash": run.turn.state.get("prompt_hash"),
            "modules": run.modules,
            "tools_offered": run.offered,
            "tools_called": [c["name"] for c in run.tools_called],
            "response_types": [b["type"] for b in blocks],
            "steps": run.log_steps,
            "tokens": response.as_dict()["usage"],
            "outcome": outcome,
        }
        await save_turn(self.store, run)
        await save_conversation_state(self.store, run)
        await bus.publish(finished_event(run, outcome))
        return response


def _context_since(past: Sequence[Turn]) -> int:
    return max((int(t.state.get("context_since", 0)) for t in past), default=0)


def _earlier(past: Sequence[Turn], since: int = 0) -> list[Message]:
    """The earlier turns' messages, without the context messages of turns before the latest
    ``context_since`` (that turn's request was sent without them)."""
    since = max(since, _context_since(past))
    return [
        m
        for t in past
        for m in history.from_state(t.state.get("messages", []))
        if t.seq >= since or not prompt.is_context(m)
    ]


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _said(past: Sequence[Turn], message: str) -> list[str]:
    """The user's own words the write-origin check compares a write with: their recent
    messages in the conversation and this one (outcome notes have no user message)."""
    return [*(t.user_message for t in past[-RECENT_TURNS:] if t.user_message), message]
