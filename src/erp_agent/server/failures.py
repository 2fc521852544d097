"""Failures answered in words, in the shape of the protocol the client speaks: the web API's
``{"detail"}``, the OpenAI-compatible API's ``{"error": {…}}`` under ``/v1/``, a JSON-RPC error
at ``/mcp``. Never a traceback, a plain-text 500 or the store's address (``channels.faults``
decides the status and the words; this module only shapes them)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.types import Scope

from erp_agent.channels.faults import SERVER_ERROR, Fault, logged
from erp_agent.errors import ErpAgentError

OPENAI_PREFIX = "/v1/"
MCP_PATH = "/mcp"
RETRY_AFTER_SECONDS = "30"  # for 503s: the ERP or the store was not reachable


def _route_path(scope: Scope) -> str:
    root = str(scope.get("root_path") or "")
    path = str(scope.get("path") or "")
    return path[len(root) :] if root and path.startswith(root) else path


def fault_response(
    scope: Scope, found: Fault, *, param: str | None = None, rpc_id: Any = None
) -> JSONResponse:
    """``found`` as the client's protocol says an error (``param``: the field at fault;
    ``rpc_id``: the JSON-RPC request's id, when it could be read)."""
    path = _route_path(scope)
    headers = {"Retry-After": RETRY_AFTER_SECONDS} if found.status == 503 else None
    body: dict[str, Any]
    if path.startswith(OPENAI_PREFIX):
        kind = "invalid_request_error" if found.status < 500 else "server_error"
        body = {
            "error": {"message": found.message, "type": kind, "param": param, "code": found.kind}
        }
    elif path == MCP_PATH or path.startswith(MCP_PATH + "/"):
        code = -32600 if found.status < 500 else SERVER_ERROR
        data = {"status": found.status, "kind": found.kind, **({"field": param} if param else {})}
        error = {"code": code, "message": found.message, "data": data}
        body = {"jsonrpc": "2.0", "id": rpc_id, "error": error}
    else:
        body = {"detail": found.message, "kind": found.kind}
        if param:
            body["field"] = param
    return JSONResponse(body, status_code=found.status, headers=headers)


def install(app: FastAPI) -> None:
    """Every failure a route did not answer itself becomes an answer in words: the ERP's state
    (502/503/504), the store's (503), or a plain 500 whose details go to the log only."""

    @app.exception_handler(ErpAgentError)
    async def known(request: Request, exc: ErpAgentError) -> JSONResponse:
        return fault_response(request.scope, logged(exc, f"{request.method} {request.url.path}"))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return fault_response(request.scope, logged(exc, f"{request.method} {request.url.path}"))
