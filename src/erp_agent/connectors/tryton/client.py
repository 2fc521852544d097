"""An async JSON-RPC client for trytond: Tryton's value codec, sign-in, and every error turned
into the ERP's own words (``ErpRefusal``) or one plain line (``ErpUnavailable``).

One pooled httpx client per server, shared by every user; each call carries the user's own
session (``Authorization: Session base64(login:uid:token)``), so Tryton's access rights and
record rules apply as that user. Reads are retried on timeouts and 5xx; writes never are (a
write that timed out may have happened).
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx

from erp_agent.connectors.credentials import Credential
from erp_agent.errors import (
    STALE_RECORD,
    ErpAuthenticationError,
    ErpBadResponse,
    ErpRefusal,
    ErpSessionExpired,
    ErpTimeout,
    ErpUnavailable,
    Refusal,
)

_RETRIES = 2


def encode(value: Any) -> Any:
    """A Python value in Tryton's JSON (Decimal, date, datetime, time, timedelta, bytes)."""
    if isinstance(value, Decimal):
        return {"__class__": "Decimal", "decimal": str(value)}
    if isinstance(value, dt.datetime):
        return {"__class__": "datetime", "year": value.year, "month": value.month,
                "day": value.day, "hour": value.hour, "minute": value.minute,
                "second": value.second, "microsecond": value.microsecond}  # fmt: skip
    if isinstance(value, dt.date):
        return {"__class__": "date", "year": value.year, "month": value.month, "day": value.day}
    if isinstance(value, dt.time):
        return {"__class__": "time", "hour": value.hour, "minute": value.minute,
                "second": value.second, "microsecond": value.microsecond}  # fmt: skip
    if isinstance(value, dt.timedelta):
        return {"__class__": "timedelta", "seconds": value.total_seconds()}
    if isinstance(value, bytes):
        return {"__class__": "bytes", "base64": base64.b64encode(value).decode()}
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    return value


def _decode_object(obj: dict[str, Any]) -> Any:
    kind = obj.get("__class__")
    if kind == "Decimal":
        return Decimal(obj["decimal"])
    if kind == "date":
        return dt.date(obj["year"], obj["month"], obj["day"])
    if kind == "datetime":
        return dt.datetime(obj["year"], obj["month"], obj["day"], obj.get("hour", 0),
                           obj.get("minute", 0), obj.get("second", 0), obj.get("microsecond", 0))  # fmt: skip
    if kind == "time":
        return dt.time(obj.get("hour", 0), obj.get("minute", 0), obj.get("second", 0),
                       obj.get("microsecond", 0))  # fmt: skip
    if kind == "timedelta":
        return dt.timedelta(seconds=obj["seconds"])
    if kind == "bytes":
        return base64.b64decode(obj["base64"])
    return obj


@dataclass(frozen=True)
class Session:
    """A signed-in Tryton session: the login, the user's id and the session token."""

    login: str
    uid: int
    token: str

    @classmethod
    def of(cls, cred: Credential) -> Session:
        uid, _, token = (cred.sid or "").partition(":")
        if not uid.isdigit() or not token:
            raise ErpSessionExpired("Your Tryton session is not valid; sign in again.")
        return cls(cred.user, int(uid), token)

    def header(self) -> str:
        raw = f"{self.login}:{self.uid}:{self.token}".encode()
        return "Session " + base64.b64encode(raw).decode()


def _message(args: Any) -> tuple[str, str, list[str]]:
    """(message, exception type, all lines) from a Tryton error's ``args``."""
    if isinstance(args, list | tuple) and args and isinstance(args[0], str):
        kind, rest = args[0], args[1] if len(args) > 1 else ""
        if kind in ("UserError", "UserWarning", "AccessError") and isinstance(rest, list | tuple):
            parts = [str(p) for p in rest[:2] if isinstance(p, str) and p]
            return (parts[0] if parts else kind), kind, parts
        if kind == "ConcurrencyException":
            return str(rest), kind, [str(rest)]
        if kind == "LoginException":
            text = str(rest[1]) if isinstance(rest, list | tuple) and len(rest) > 1 else kind
            return text, kind, [text]
        # Any other server exception: one plain line with its first line, never the traceback
        # Tryton sends along.
        first = kind.strip().splitlines()[0] if kind.strip() else "no reason given"
        text = f"Tryton could not do this ({first})."
        return text, "ServerError", [text]
    return str(args), "ServerError", [str(args)]


class TrytonClient:
    """JSON-RPC calls to one trytond database (``{base_url}/{database}/``)."""

    def __init__(
        self,
        base_url: str,
        database: str,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.database = database
        self.url = f"{self.base_url}/{database}/rpc/"
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport)
        self._ids = 0

    async def aclose(self) -> None:
        await self._http.aclose()

    async def login(self, login: str, password: str) -> Session:
        result = await self._post(
            "common.db.login", [login, {"password": password}, "en"], None, write=True
        )
        if not isinstance(result, list) or len(result) < 2:
            raise ErpAuthenticationError(f"Sign-in failed for {login}: Tryton refused it.")
        return Session(login, int(result[0]), str(result[1]))

    async def call(
        self,
        session: Session | None,
        method: str,
        params: Sequence[Any],
        *,
        write: bool = False,
    ) -> Any:
        """``method`` (``model.sale.sale.search_read``) with ``params``, as ``session``."""
        return await self._post(method, list(params), session, write=write)

    async def version(self) -> str:
        return str(await self._post("common.server.version", [], None))

    async def _post(
        self, method: str, params: list[Any], session: Session | None, *, write: bool = False
    ) -> Any:
        self._ids += 1
        body = json.dumps({"id": self._ids, "method": method, "params": encode(params)})
        headers = {"Content-Type": "application/json"}
        if session is not None:
            headers["Authorization"] = session.header()
        attempt = 0
        while True:
            try:
                response = await self._http.post(self.url, content=body, headers=headers)
            except httpx.TimeoutException as exc:
                if write or attempt >= _RETRIES:
                    raise ErpTimeout(f"Tryton at {self.base_url} did not answer in time.") from exc
            except httpx.TransportError as exc:
                if write or attempt >= _RETRIES:
                    raise ErpUnavailable(
                        f"Cannot reach Tryton at {self.base_url}: {exc.__class__.__name__}."
                    ) from exc
            else:
                if response.status_code < 500 or write or attempt >= _RETRIES:
                    return self._result(response, method, session)
            attempt += 1
            await asyncio.sleep(0.2 * attempt)

    def _result(self, response: httpx.Response, method: str, session: Session | None) -> Any:
        status = response.status_code
        if status == 401:
            if method == "common.db.login":
                raise ErpAuthenticationError("Sign-in failed: wrong user name or password.")
            raise ErpSessionExpired("Your Tryton session has ended; sign in again.")
        if status == 403:
            text = "You are not allowed to call this method." if session else "Forbidden."
            raise ErpRefusal(Refusal(text, "Forbidden", 403, [text]))
        if status == 404:
            raise ErpUnavailable(
                f"Tryton at {self.base_url} has no database named {self.database!r}."
            )
        if status == 429:
            raise ErpAuthenticationError("Too many sign-in attempts; Tryton asks to wait.")
        if status >= 500:
            raise ErpUnavailable(f"Tryton at {self.base_url} failed (HTTP {status}).")
        try:
            data = json.loads(response.text, object_hook=_decode_object)
        except ValueError:
            raise ErpBadResponse(status, self.url) from None
        if not isinstance(data, dict):
            raise ErpBadResponse(status, self.url)
        if data.get("error") is not None:
            message, kind, lines = _message(data["error"])
            if kind == "ConcurrencyException":
                # Tryton's own words; typed as a stale record so a fresh proposal is offered.
                raise ErpRefusal(Refusal(message, STALE_RECORD, 409, lines, title=kind))
            if kind == "LoginException":
                raise ErpAuthenticationError(message)
            code = 500 if kind == "ServerError" else 417
            raise ErpRefusal(Refusal(message, kind, code, lines))
        return data.get("result")
