"""POST /api/chat: one turn, streamed as Server-Sent Events."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field

from erp_agent.errors import TokenBudgetExceeded
from erp_agent.server import background
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState
from erp_agent.server.streaming import stream_turn

router = APIRouter(tags=["chat"])


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=8000)
    conversation_id: str | None = None
    background: bool = Field(
        False,
        description="Answer at once with the turn's id (HTTP 202); the turn runs on the queue "
        "(or in the background) and GET /api/turns/{id}/events streams it from any worker.",
    )


async def check_budget(state: ServerState, org: str) -> None:
    """The organisation's monthly budget (the same check every model call makes)."""
    try:
        await state.runtime.budgets.check(org)
    except TokenBudgetExceeded as exc:
        raise HTTPException(
            429,
            f"Your organisation has used its {exc.budget:,} tokens for this month. "
            "An administrator can raise the budget in the admin console.",
        ) from exc


@router.post(
    "/api/chat",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}},
        202: {"description": "Queued (background): {turn_id, conversation_id, events}"},
    },
    summary="Ask; stream progress, deltas, then the structured response (SSE)",
)
async def chat(body: ChatRequest, user: User, state: State, request: Request) -> Response:
    """Events: `progress` (typed engine events), `delta` (streamed text), `response` (the
    structured response: blocks, tools_called, usage, model), `error` (a message to show)."""
    await check_budget(state, user.session.org)
    if body.background:
        turn = await background.submit(state, user.session, body.message, body.conversation_id)
        return JSONResponse(
            {
                "turn_id": turn.id,
                "conversation_id": turn.conversation_id,
                "status": turn.status,
                # Under the root path the app is served at (ERP_AGENT_ROOT_PATH), as clients GET it.
                "events": f"{request.scope.get('root_path') or ''}/api/turns/{turn.id}/events",
            },
            status_code=202,
        )
    return StreamingResponse(
        stream_turn(state, user.session, body.message, body.conversation_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
