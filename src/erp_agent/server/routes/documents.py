"""POST /api/documents/scan: an uploaded invoice or purchase order → a draft proposal.

The browser sends the file as the request body (its own content type, no multipart). The
route only carries bytes: reading the file, looking the party and items up and preparing the
proposal all go through the gateway in the user's session (``erp_agent.documents.draft``).
The outcome is stored as a turn of the conversation, so it is in the history like any answer
and the proposal card can be confirmed from there. A file that cannot be read (not a document,
damaged, over a limit) is refused with 422 and the reason in words, and nothing is stored.
"""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request

from erp_agent.calls.session import Session
from erp_agent.documents.draft import ScanResult, scan_to_draft
from erp_agent.engine import history
from erp_agent.models.base import Message
from erp_agent.results.blocks import Block, proposal_block, text_block
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState
from erp_agent.store.records import Conversation, Turn

router = APIRouter(prefix="/api/documents", tags=["documents"])


async def _body(request: Request, limit: int) -> bytes:
    """The upload, refused as soon as it passes ``limit`` bytes (never held whole)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, _too_large(int(declared), limit))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, _too_large(size, limit))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int, limit: int) -> str:
    return (
        f"The file is over {limit / 1_000_000:.0f} MB ({size / 1_000_000:.1f} MB so far), the "
        "limit for scans. Send a smaller scan or a PDF; nothing was read or written."
    )


def blocks_for(result: ScanResult, filename: str) -> list[Block]:
    """The answer as response blocks: the message, then the proposal card with its flags (or,
    when nothing could be prepared, the flags on their own)."""
    blocks: list[Block] = [text_block(result.message)]
    flags = [f.as_dict() for f in result.flags]
    source = {"filename": filename, **result.extraction}
    if result.proposal is not None:
        card = proposal_block(result.proposal)
        card["flags"], card["source"] = flags, source
        blocks.append(card)
        if result.choices is not None:
            blocks.append(result.choices.copy())
    elif flags:
        blocks.append({"type": "scan", "flags": flags, "source": source})
    return blocks


async def _record(
    state: ServerState,
    session: Session,
    conversation_id: str | None,
    filename: str,
    result: ScanResult,
) -> dict[str, Any]:
    """Store the scan as a turn; what the next turn's model sees is our summary (ERP ids and
    counts), never the document's own text."""
    store = state.runtime.store
    conversation = await store.get_conversation(conversation_id) if conversation_id else None
    if conversation is None or conversation.user != session.user:
        conversation = Conversation(
            id=f"conv_{secrets.token_urlsafe(10)}",
            user=session.user,
            org=session.org,
            title=f"Scan of {filename}"[:80],
        )
        await store.create_conversation(conversation)
    past = await store.turns(conversation.id)
    user_message = f"Scan {filename}"
    summary = result.message
    if result.proposal is not None:
        summary += f" Proposal {result.proposal['id']}: {result.proposal['summary']}."
    turn = Turn(
        id=f"turn_{secrets.token_urlsafe(10)}",
        conversation_id=conversation.id,
        seq=len(past) + 1,
        user_message=user_message,
        status="done",
    )
    response = {
        "turn_id": turn.id,
        "conversation_id": conversation.id,
        "blocks": blocks_for(result, filename),
        "tools_called": [],
        "usage": {"prompt": 0, "cached": 0, "completion": 0},
        "model": "",
        "outcome": "proposal" if result.proposal is not None else "answered",
    }
    turn.state.update(
        {
            "messages": history.to_state(
                [Message("user", user_message), Message("assistant", summary)]
            ),
            "response": response,
        }
    )
    turn.updated_at = dt.datetime.now(dt.UTC)
    await store.save_turn(turn)
    return response


@router.post(
    "/scan",
    summary="Scan an invoice or purchase order (the file is the request body) into a draft",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                t: {"schema": {"type": "string", "format": "binary"}}
                for t in ("application/pdf", "image/png", "image/jpeg", "image/tiff")
            },
        }
    },
)
async def scan(
    request: Request,
    user: User,
    state: State,
    filename: Annotated[str, Query(max_length=255)] = "upload",
    kind: Annotated[str, Query(pattern="^(auto|purchase_invoice|sales_order)$")] = "auto",
    conversation_id: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """Returns the turn response (blocks: the message and the proposal card with every flagged
    field) plus ``scan``: the fields read, the ERP matches and the flags."""
    data = await _body(request, state.runtime.settings.scan.max_bytes)
    if not data:
        raise HTTPException(400, "The upload was empty: choose a PDF or an image to scan.")
    result = await scan_to_draft(state.runtime.gateway, user.session, data, filename, kind)
    if result.unreadable:
        raise HTTPException(422, result.message)
    response = await _record(state, user.session, conversation_id, filename, result)
    return {**response, "scan": result.as_dict()}
