"""How a failure reaches a user, on every channel: one HTTP status, one short kind and one
message in words, decided here once (the web app's JSON and SSE, the OpenAI-compatible API,
MCP and the relay all ask ``fault``).

The store's errors name its database (driver, host, port, database, role) for the operator, who
reads them in the log and on the command line; no message that leaves through a channel does:
a store failure is said in words, and ``scrub`` removes any database address a message might
still carry.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from erp_agent.errors import (
    ApiKeyInvalid,
    ChannelError,
    ConfigError,
    ErpAgentError,
    ErpAuthenticationError,
    ErpBadResponse,
    ErpRefusal,
    ErpSessionExpired,
    ErpTimeout,
    ErpUnavailable,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    RelayProtocolError,
    SignInRefused,
    SignInThrottled,
    StoreError,
    StoreUnavailable,
    TokenBudgetExceeded,
    ToolError,
)

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")

STORE_DOWN = (
    "The agent's own database is not answering right now, so nothing could be read or saved. "
    "Please try again in a minute; if it keeps happening, tell an administrator."
)
STORE_FAILED = (
    "The agent could not read or save its own records just now; nothing was changed. "
    "Please try again; if it keeps happening, tell an administrator."
)
SERVER_FAILED = "Something went wrong on the server; nothing was written. Please try again."
SESSION_ENDED = "Your ERP session has ended. Sign in again."
SERVER_ERROR = -32000

# A URL of anything but the web (postgresql+psycopg://…, redis://…, sqlite:///…), or a web URL
# carrying a user name: a store or broker address, never shown.
_DSN = re.compile(r"\b(?!https?://)[a-z][a-z0-9+.-]*://\S*|\bhttps?://[^\s/@]+@\S*", re.I)
# libpq's and the drivers' own words about where they tried to connect.
_LIBPQ = re.compile(
    r"connection to server (?:at|on) .*?(?:failed|$)"
    r"|\b(?:host|hostaddr|port|dbname|user|password)=\S+"
    r"|\b(?:role|database|socket|user) \"[^\"]*\""
    r"|\(Background on this error at: \S+\)",
    re.I | re.M,
)


@dataclass(frozen=True)
class Fault:
    status: int  # the HTTP status a channel answers with
    kind: str  # a short code for clients: erp_unavailable, store_unavailable, …
    message: str  # for the user: what happened and what to do


_HIDDEN = "[the database]"
_RUN = re.compile(r"\(?\[the database\](?:[\s,:()]*\[the database\])*\)?")


def scrub(text: str) -> str:
    """``text`` without any database address, host, port, database or role name."""
    text = _LIBPQ.sub(_HIDDEN, _DSN.sub(_HIDDEN, text))
    return _RUN.sub(_HIDDEN, text)


def fault(exc: BaseException) -> Fault:
    """What to answer for ``exc``: the ERP's state in words (502 for an answer that is not its
    API, 503 unreachable, 504 too slow), the store's without its address (503), and a plain
    500 for anything unexpected (its details go to the log only)."""
    if isinstance(exc, (ErpSessionExpired, ErpAuthenticationError)):
        return Fault(401, "erp_session_ended", SESSION_ENDED)
    if isinstance(exc, ErpTimeout):
        return Fault(504, "erp_timeout", _erp_words(exc))
    if isinstance(exc, ErpBadResponse):
        return Fault(502, "erp_bad_response", _erp_words(exc))
    if isinstance(exc, ErpUnavailable):
        return Fault(503, "erp_unavailable", _erp_words(exc))
    if isinstance(exc, ErpRefusal):  # the ERP's own words, verbatim (they hold no address)
        if exc.refusal.status >= 500:
            words = f"The ERP failed (HTTP {exc.refusal.status}): {exc.refusal.message}"
            return Fault(502, "erp_failed", words + " Nothing was written; try again.")
        return Fault(403, "erp_refused", f"The ERP refused: {exc.refusal.message}")
    if isinstance(exc, StoreUnavailable):
        return Fault(503, "store_unavailable", STORE_DOWN)
    if isinstance(exc, StoreError):
        return Fault(500, "store_error", STORE_FAILED)
    if isinstance(exc, (SignInThrottled, TokenBudgetExceeded, ModelRateLimited)):
        return Fault(429, "rate_limited", scrub(str(exc)))
    if isinstance(exc, ModelTimeout):
        return Fault(504, "model_timeout", str(exc))
    if isinstance(exc, ModelUnavailable):
        return Fault(503, "model_unavailable", str(exc))
    if isinstance(exc, ModelError):
        return Fault(502, "model_error", str(exc))
    if isinstance(exc, ApiKeyInvalid):
        return Fault(401, "invalid_api_key", scrub(str(exc)))
    if isinstance(exc, RelayProtocolError):
        return Fault(409, "relay_protocol", scrub(str(exc)))
    if isinstance(exc, ChannelError):
        return Fault(400, "channel_error", scrub(str(exc)))
    if isinstance(exc, SignInRefused):
        return Fault(exc.status, "sign_in_refused", scrub(str(exc)))
    if isinstance(exc, ToolError):
        return Fault(400, "bad_request", scrub(str(exc)))
    if isinstance(exc, ConfigError):
        return Fault(500, "misconfigured", "The server is not set up right: " + scrub(str(exc)))
    if isinstance(exc, ErpAgentError):
        return Fault(500, "server_error", scrub(str(exc)))
    return Fault(500, "server_error", SERVER_FAILED)


def _erp_words(exc: BaseException) -> str:
    text = scrub(str(exc)).rstrip(". ")
    return f"{text}. Nothing was written; try again when the ERP answers."


def user_message(exc: BaseException) -> str:
    return fault(exc).message


def logged(exc: BaseException, where: str) -> Fault:
    """``fault(exc)``, with the whole error in the log for the operator (5xx only)."""
    found = fault(exc)
    if found.status >= 500:
        if isinstance(exc, ErpAgentError) and found.status != 500:
            log.warning("%s: %s (%s)", where, exc, type(exc).__name__)
        else:
            log.error("%s failed", where, exc_info=exc)
    return found


def mcp_error(exc: BaseException) -> Exception:
    """The JSON-RPC error for ``exc``: its words, and {status, kind} as data."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import INVALID_REQUEST

    found = logged(exc, "MCP request")
    # A request the client must change is invalid; anything else is a server error (-32000,
    # the first of the codes JSON-RPC leaves to servers), with the HTTP status as data.
    code = INVALID_REQUEST if found.status in (400, 401) else SERVER_ERROR
    return MCPError(code, found.message, {"status": found.status, "kind": found.kind})


def in_words(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """An MCP handler whose failures reach the client as JSON-RPC errors in words (the SDK
    would answer anything but its own MCPError with a bare "Internal server error")."""
    from mcp.shared.exceptions import MCPError

    @functools.wraps(handler)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except MCPError:
            raise
        except Exception as exc:
            raise mcp_error(exc) from exc

    return guarded
