"""What a submit or a cancel will do, shown before the user confirms it: the ledger entries
(account, debit, credit, party, cost centre), stock movements and payment schedule the ERP will
create, or — for a cancel — what reverses and which linked documents block it, in the ERP's
words.

Computed by the ERP itself as the user (``Connector.project``, the PROJECTION capability), for
the record's version the proposal carries: a projection read at another version is dropped,
and a connector without the capability shows none — never one computed here. Stored with the
proposal, so every confirm surface shows the same one; a stale or edited proposal is prepared
again and projected again.
"""

from __future__ import annotations

import logging

from erp_agent.calls.session import Session
from erp_agent.connectors.base import Capability, Connector, Projection
from erp_agent.errors import ErpAgentError
from erp_agent.store.records import ProjectionView
from erp_agent.tools.base import Change, Tool

ACTIONS = frozenset({"submit", "cancel"})
LABEL = "Projected by the ERP: nothing is posted until you confirm"
log = logging.getLogger(__name__)


def applies(connector: Connector, tool: Tool | None) -> bool:
    return (
        tool is not None
        and tool.entity is not None
        and tool.action in ACTIONS
        and connector.profile.can(Capability.PROJECTION)
    )


async def project(
    connector: Connector, session: Session, tool: Tool | None, change: Change
) -> ProjectionView | None:
    """The projection of the proposed change, or None (no capability, nothing to say, the ERP
    out of reach, or the record at another version than the one proposed)."""
    if not applies(connector, tool) or tool is None or tool.entity is None:
        return None
    record_id = change.payload.get("id")
    if not record_id:
        return None
    try:
        found = await connector.project(
            session.credential, tool.entity, str(record_id), tool.action
        )
    except ErpAgentError:
        # The proposal stands without one: a projection is shown only as the ERP computed it.
        log.warning("no projection for %s %s", tool.name, record_id, exc_info=True)
        return None
    if found is None:
        return None
    if change.base_modified and found.modified and found.modified != change.base_modified:
        return None  # read at another version than the one the user confirms
    return view(found, tool, str(record_id))


def view(found: Projection, tool: Tool, record_id: str) -> ProjectionView:
    verb = "submitting" if found.action == "submit" else "cancelling"
    return {
        "label": LABEL,
        "action": found.action,
        "entity": tool.entity,
        "record": record_id,
        "modified": found.modified,
        "text": f"What {verb} {record_id} will post, as the ERP computes it now for this "
        "version of the record",
        "currency": found.currency,
        "ledger": found.ledger,
        "stock": found.stock,
        "payment_schedule": found.payment_schedule,
        "blocked_by": found.blocked_by,
        "refusal": found.refusal,
        "source": found.source,
        "notes": found.notes,
    }
