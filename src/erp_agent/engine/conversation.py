"""Conversation state: what a conversation is about, kept in the store between turns.

Follow-ups ("and last year?", "only Kisumu", "as a chart", "export that", "the second one",
"why?", "submit it") and replies to a clarification edit what came before instead of starting
over. The engine records facts about each turn here (the user's messages, the last figure-bearing
query with its result id and definition, the result last shown, the documents mentioned, a
question with choices still open); a model reads them from the context block and decides what
a new message means. Any worker can continue any conversation: nothing lives in process memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict, cast

from erp_agent.calls.outcome import ChoiceOption
from erp_agent.results.blocks import Block, question
from erp_agent.results.render import definition_of
from erp_agent.store.base import Store
from erp_agent.tools.base import Args, Definition

MAX_REQUESTS = 6  # user messages kept: enough for a chain of follow-ups
MAX_DOCUMENTS = 10
MAX_TOOLS = 14  # with the routing spine, within the router's cap
CONTEXT_PREFIX = "Conversation state: "
_QUERY_ACTIONS = ("aggregate", "count", "list", "query", "get")


class DocumentRef(TypedDict):
    """A document the conversation mentioned (``url``: one a confirmed write made)."""

    entity: str
    id: str
    url: NotRequired[str]


class Pending(TypedDict):
    """A question with choices still open: what the next message may be a reply to."""

    question: str
    options: list[ChoiceOption]
    slot: NotRequired[str]


class Request(TypedDict):
    """One user message, with the question it may answer."""

    text: str
    pending: NotRequired[Pending]


class QueryRecord(TypedDict):
    """What a follow-up needs of one figure-bearing call: the call, its result id and how it
    was computed."""

    tool: str
    args: Args  # as the model sent them (JSON)
    result_id: NotRequired[str]
    definition: NotRequired[Definition]
    columns: NotRequired[list[Any]]  # the result's first 20


class ConversationState(TypedDict, total=False):
    """The conversation's state as stored (one JSON document, ``Store.conversation_state``)."""

    requests: list[Request]
    last_query: QueryRecord
    last_shown: str  # the result id last shown as a table or chart
    documents: list[DocumentRef]
    pending: Pending
    created: DocumentRef  # the document the last confirmed write made or changed
    tools: list[str]  # the tools the last turn used


async def load(store: Store, conversation_id: str) -> ConversationState:
    """The state as stored: JSON this agent wrote, cast once here."""
    return cast(ConversationState, await store.conversation_state(conversation_id))


def is_query(tool: str) -> bool:
    """Tools whose result is what the user asked for (not a display or a lookup of names)."""
    return tool.startswith(("report.", "analytics.")) or tool.split(".")[-1] in _QUERY_ACTIONS


def query_record(tool: str, args: Any, result_id: str | None, data: Any) -> QueryRecord:
    """What a follow-up needs of one query: the call, its result id and how it was computed."""
    record: QueryRecord = {"tool": tool, "args": args if isinstance(args, dict) else {}}
    if result_id:
        record["result_id"] = result_id
    if isinstance(data, dict):
        definition = definition_of(data)
        if definition is not None:
            record["definition"] = definition
        if isinstance(data.get("columns"), list):
            record["columns"] = data["columns"][:20]
    return record


def route_extra(state: ConversationState) -> list[str]:
    """Tools to offer besides what the message's words select: the ones the last turn used.
    (What a follow-up about the last result needs, results.export and results.page, the
    routing spine offers from the first turn.)"""
    return list(state.get("tools", [])) if state else []


def context_block(state: Mapping[str, Any]) -> str:
    """The state as one line of JSON for the model's context ('' when there is none)."""
    shown = {k: state[k] for k in ("requests", "last_query", "last_shown", "documents", "pending",
                                   "created") if state.get(k)}  # fmt: skip
    return CONTEXT_PREFIX + json.dumps(shown, default=str, ensure_ascii=False) if shown else ""


def advance(
    state: ConversationState,
    message: str,
    *,
    queries: Sequence[QueryRecord],
    shown: str | None,
    blocks: Sequence[Block],
    documents: Sequence[tuple[str, str]],
    tools: Sequence[str],
) -> ConversationState:
    """The state after a turn: this message appended, the newest query and shown result kept,
    the documents merged, a question with choices recorded as pending (or the old one cleared)."""
    new = state.copy()
    entry: Request = {"text": message[:2000]}
    if state.get("pending"):
        entry["pending"] = state["pending"]  # what this message may be a reply to
    new["requests"] = [*state.get("requests", []), entry][-MAX_REQUESTS:]
    if queries:
        new["last_query"] = queries[-1]
    if shown:
        new["last_shown"] = shown
    docs = [d for d in state.get("documents", []) if isinstance(d, dict)]
    for entity, doc_id in documents:
        docs = [d for d in docs if d.get("id") != doc_id] + [{"entity": entity, "id": doc_id}]
    new["documents"] = docs[-MAX_DOCUMENTS:]
    choices = question(blocks)
    if choices is not None:
        pending: Pending = {"question": choices["question"], "options": choices["options"]}
        if "slot" in choices:
            pending["slot"] = choices["slot"]
        new["pending"] = pending
    else:
        new.pop("pending", None)
    if tools:
        new["tools"] = list(dict.fromkeys(tools))[:MAX_TOOLS]
    return new


async def record_document(
    store: Store, conversation_id: str, entity: str, doc_id: str, url: str | None = None
) -> None:
    """After a confirmed write: the document created or changed, so "submit it" can find it."""
    state = await load(store, conversation_id)
    doc: DocumentRef = {"entity": entity, "id": doc_id}
    if url:
        doc["url"] = url
    docs = [d for d in state.get("documents", []) if d.get("id") != doc_id] + [doc]
    state["documents"] = docs[-MAX_DOCUMENTS:]
    state["created"] = doc
    await store.save_conversation_state(conversation_id, state)
