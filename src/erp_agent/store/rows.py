"""Mapping between the store's dataclasses and table rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import RowMapping

from erp_agent.store.records import (
    AuditEvent,
    Conversation,
    Decision,
    Proposal,
    ProposalStatus,
    Turn,
)

Values = dict[str, Any]


def proposal_values(proposal: Proposal) -> Values:
    return {
        "id": proposal.id,
        "user": proposal.user,
        "session_id": proposal.session_id,
        "org": proposal.org,
        "tool": proposal.tool,
        "payload": proposal.payload,
        "payload_hash": proposal.payload_hash,
        "summary": proposal.summary,
        "diff": proposal.diff,
        "document": proposal.document,
        "status": proposal.status.value,
        "created_at": proposal.created_at,
        "expires_at": proposal.expires_at,
        "decided_at": proposal.decided_at,
        "result": proposal.result,
        "error": proposal.error,
        "conversation_id": proposal.conversation_id,
        "base_modified": proposal.base_modified,
        "claimed_at": proposal.claimed_at,
        "checkpoint": proposal.checkpoint,
        "superseded_by": proposal.superseded_by,
        "warning": proposal.warning,
        "projection": proposal.projection,
        "business_date": proposal.business_date,
    }


def proposal_from_row(row: RowMapping) -> Proposal:
    return Proposal(
        id=row["id"],
        user=row["user"],
        session_id=row["session_id"],
        org=row["org"],
        tool=row["tool"],
        payload=row["payload"],
        payload_hash=row["payload_hash"],
        summary=row["summary"],
        diff=row["diff"],
        document=row["document"],
        status=ProposalStatus(row["status"]),
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        decided_at=row["decided_at"],
        result=row["result"],
        error=row["error"],
        conversation_id=row["conversation_id"],
        base_modified=row["base_modified"],
        claimed_at=row["claimed_at"],
        checkpoint=row["checkpoint"],
        superseded_by=row["superseded_by"],
        warning=row["warning"],
        projection=row["projection"],
        business_date=row["business_date"],
    )


def event_values(event: AuditEvent) -> Values:
    values: Values = {
        "user": event.user,
        "session_id": event.session_id,
        "org": event.org,
        "tool": event.tool,
        "args_digest": event.args_digest,
        "decision": event.decision.value,
        "reason": event.reason,
        "latency_ms": event.latency_ms,
        "proposal_id": event.proposal_id,
        "at": event.at,
        "turn_id": event.turn_id,
    }
    if event.id is not None:
        values["id"] = event.id
    return values


def event_from_row(row: RowMapping) -> AuditEvent:
    return AuditEvent(
        id=row["id"],
        user=row["user"],
        session_id=row["session_id"],
        org=row["org"],
        tool=row["tool"],
        args_digest=row["args_digest"],
        decision=Decision(row["decision"]),
        reason=row["reason"],
        latency_ms=row["latency_ms"],
        proposal_id=row["proposal_id"],
        at=row["at"],
        turn_id=row["turn_id"],
    )


def conversation_values(conversation: Conversation) -> Values:
    return {
        "id": conversation.id,
        "user": conversation.user,
        "org": conversation.org,
        "title": conversation.title,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
    }


def conversation_from_row(row: RowMapping) -> Conversation:
    return Conversation(
        id=row["id"],
        user=row["user"],
        org=row["org"],
        title=row["title"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def turn_values(turn: Turn) -> Values:
    return {
        "id": turn.id,
        "conversation_id": turn.conversation_id,
        "seq": turn.seq,
        "user_message": turn.user_message,
        "status": turn.status,
        "state": turn.state,
        "created_at": turn.created_at,
        "updated_at": turn.updated_at,
    }


def turn_from_row(row: RowMapping) -> Turn:
    return Turn(
        id=row["id"],
        conversation_id=row["conversation_id"],
        seq=row["seq"],
        user_message=row["user_message"],
        status=row["status"],
        state=row["state"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
