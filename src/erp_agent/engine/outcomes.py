"""After a confirm or a reject, the result is a message in the conversation the proposal came
from: the created or changed document as a link, or the ERP's refusal in its own words.

The message is stored as a turn of its own (no user message, one assistant message), so it is in
the history every channel shows, in the next turn's context ("submit it", "email it"), and the
document goes into the conversation state as ``{"entity", "id", "url"}``.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.catalog import Catalog
from erp_agent.catalog.templates import format_value
from erp_agent.connectors.base import Connector
from erp_agent.engine.conversation import record_document
from erp_agent.engine.response import TurnResponse
from erp_agent.errors import StoreError
from erp_agent.results.blocks import text_block
from erp_agent.store.base import Store
from erp_agent.store.records import Decision, Proposal, Turn, Written
from erp_agent.tools.base import ToolRegistry

log = logging.getLogger(__name__)

_DONE = {
    "create": "Created",
    "update": "Updated",
    "submit": "Submitted",
    "cancel": "Cancelled",
    "delete": "Deleted",
}


def _figures(record: dict[str, Any], amount_field: str | None) -> str:
    parts = []
    who = record.get("customer_name") or record.get("supplier_name") or record.get("party")
    if who:
        parts.append(str(who))
    if amount_field and isinstance(record.get(amount_field), (int, float)):
        currency = record.get("currency")
        money = format_value(record[amount_field], "money")
        parts.append(f"total {currency + ' ' if currency else ''}{money}")
    if record.get("workflow_state"):
        parts.append(f"now {record['workflow_state']}")
    elif record.get("status"):
        parts.append(f"status {record['status']}")
    return "; ".join(parts)


class OutcomeRecorder:
    """The gateway's decision hook: writes the outcome message into the conversation."""

    def __init__(
        self, store: Store, connector: Connector, catalog: Catalog, registry: ToolRegistry
    ) -> None:
        self.store, self.connector = store, connector
        self.catalog, self.registry = catalog, registry

    def message(
        self, proposal: Proposal, outcome: Outcome, decision: Decision
    ) -> tuple[str, Written | None]:
        """The message text and, after a write, the document it wrote."""
        if decision is Decision.REJECTED:
            return f"Rejected, nothing was written: {proposal.summary}.", None
        if outcome.status is not Status.OK:
            refusal = outcome.refusal["message"] if outcome.refusal else None
            said = f"The ERP refused: {refusal}" if refusal else outcome.message
            return f"Not done: {proposal.summary}. {said}".strip(), None
        tool = self.registry.get(proposal.tool)
        data = outcome.data if isinstance(outcome.data, dict) else {}
        entity_name = tool.entity if tool else None
        if entity_name is None or not data.get("id"):
            return f"Done: {proposal.summary}.", None
        entity = self.catalog.entity(entity_name)
        doc_id = str(data["id"])
        url = self.connector.link(entity_name, data)
        shown = f"[{doc_id}]({url})" if url else doc_id
        action = tool.action if tool else None
        if action == "workflow_action":
            verb = f"{proposal.payload.get('action')} done:"
        else:
            verb = _DONE.get(action or "", "Done:")
        figures = _figures(data, entity.amount_field)
        text = f"{verb} {entity.label} {shown}" + (f" ({figures})" if figures else "") + "."
        return text, {"entity": entity_name, "id": doc_id, "url": url}

    async def __call__(
        self, proposal: Proposal, outcome: Outcome, decision: Decision
    ) -> str | None:
        if not proposal.conversation_id:
            return None
        text, document = self.message(proposal, outcome, decision)
        try:
            conversation = await self.store.get_conversation(proposal.conversation_id)
            if conversation is None or conversation.user != proposal.user:
                return None
            past = await self.store.turns(conversation.id)
            turn = Turn(
                id=f"turn_{secrets.token_urlsafe(10)}",
                conversation_id=conversation.id,
                seq=len(past) + 1,
                user_message="",
                status="done",
            )
            response = TurnResponse(
                turn.id, conversation.id, [text_block(text)],
                outcome="executed" if document else str(decision),
            )  # fmt: skip
            turn.state = {
                "kind": "outcome",
                "proposal_id": proposal.id,
                "messages": [{"role": "assistant", "content": text, "tool_calls": []}],
                "response": response.as_dict(),
                "outcome": document,
                "document_ids": [[document["entity"], document["id"]]] if document else [],
            }
            await self.store.save_turn(turn)
            if document:
                await record_document(
                    self.store, conversation.id, document["entity"], document["id"],
                    document["url"],
                )  # fmt: skip
        except StoreError:
            # The write itself is done and audited; only its note in the conversation is lost.
            log.exception("could not record the outcome of %s in its conversation", proposal.id)
        return text
