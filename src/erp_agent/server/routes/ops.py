"""Health (store + ERP) and Prometheus metrics."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from erp_agent.server.routes._deps import ADMIN_ROLE, State, signed_in_or_none

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="Store and ERP reachable?")
async def healthz(state: State) -> JSONResponse:
    checks: dict[str, Any] = {}
    try:
        await state.runtime.store.list_conversations("__healthz__", limit=1)
        checks["store"] = "ok"
    except Exception as exc:  # a health check reports every failure instead of raising
        checks["store"] = f"failed: {type(exc).__name__}"
    try:
        await state.erp_ping()
        checks["erp"] = "ok"
    except Exception as exc:
        checks["erp"] = f"failed: {type(exc).__name__}"
    healthy = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if healthy else "degraded", **checks}, 200 if healthy else 503
    )


@router.get(
    "/metrics",
    summary="Prometheus metrics (an administrator's session, or the configured metrics token)",
)
async def metrics(request: Request, state: State) -> Response:
    # Route names, turn outcomes and token use are operational detail: not for every user.
    token = getattr(state.runtime.settings, "metrics_token", None)
    sent = request.headers.get("authorization", "")
    if token is not None and secrets.compare_digest(
        sent.encode(), f"Bearer {token.get_secret_value()}".encode()
    ):
        return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
    signed = await signed_in_or_none(request, state)
    if signed is None:
        raise HTTPException(
            401, "Sign in as an administrator, or send the metrics token as a Bearer token."
        )
    if not signed.is_admin:
        raise HTTPException(403, f"Only a {ADMIN_ROLE} may read the metrics.")
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
