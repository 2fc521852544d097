"""An async client for the Frappe REST API that always acts as the given user.

It speaks Frappe's native names (DocTypes, fieldnames); the canonical mapping lives in
``connector.py``. Reads are retried on timeouts and 5xx with backoff; writes never are, because
a write that timed out may have happened.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import random
import ssl
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.errors import refusal_from_response
from erp_agent.errors import (
    ErpAuthenticationError,
    ErpBadResponse,
    ErpRefusal,
    ErpSessionExpired,
    ErpTimeout,
    ErpUnavailable,
)

Row = dict[str, Any]
_RETRY_STATUSES = frozenset({500, 502, 503, 504, 508})
MAX_QUERY_STRING = 4000  # longer read arguments go in a POST body (proxies cut long URLs)


def _encode(params: Mapping[str, Any]) -> dict[str, str]:
    """Query-string arguments: lists and dicts as JSON, as Frappe's clients send them."""
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        out[key] = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    return out


def _is_name(value: object) -> bool:
    """A role or user name as the ERP stores it: short plain text, no control characters."""
    return isinstance(value, str) and 0 < len(value) <= 140 and value.isprintable()


def _json_body(response: httpx.Response) -> Any:
    """The decoded JSON body. An HTML page, an empty body or anything else that is not JSON
    (a proxy's error page, a login portal, a crashed worker) raises ErpBadResponse."""
    content_type = response.headers.get("content-type", "")
    try:
        if "html" in content_type:
            raise ValueError(content_type)
        return response.json()
    except ValueError:
        raise ErpBadResponse(response.status_code, str(response.request.url)) from None


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    def set_ok(self, cookie: http.cookiejar.Cookie, request: urllib.request.Request) -> bool:
        return False


def _tls_for(base_url: str) -> ssl.SSLContext | bool:
    """Certificate checks as usual for an https ERP. For a plain-http one no TLS is spoken (the
    client calls only paths under ``base_url`` and follows no redirect), so instead of loading the
    CA bundle (a noticeable part of a terminal command's start) it gets a context that trusts
    no certificate: any TLS connection would fail, never go unchecked."""
    if urllib.parse.urlsplit(base_url).scheme.lower() != "http":
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verify_mode CERT_REQUIRED, no CA loaded


class FrappeClient:
    """Native Frappe calls. One instance per ERP site; share it across users and requests."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 30.0,
        read_retries: int = 3,
        backoff: float = 0.25,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 50,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.read_retries = read_retries
        self.backoff = backoff
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=20),
            verify=_tls_for(self.base_url),
        )
        # One client serves many users: it must never remember a session cookie.
        self._http.cookies.jar.set_policy(_NoCookies())
        self._version: int | None = None

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------ transport

    def _auth(self, cred: Credential) -> dict[str, str]:
        if cred.sid:
            return {"Cookie": f"sid={cred.sid}"}
        if cred.access_token:
            return {"Authorization": f"Bearer {cred.access_token}"}
        return {"Authorization": f"token {cred.api_key}:{cred.api_secret}"}

    async def request(
        self,
        method: str,
        path: str,
        cred: Credential | None,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        write: bool = False,
    ) -> Any:
        """One call. Returns the decoded body; raises ErpRefusal with the ERP's own words."""
        headers = self._auth(cred) if cred else {}
        attempts = 1 if write else self.read_retries + 1
        last_error = ""
        timed_out = False
        for attempt in range(attempts):
            try:
                response = await self._http.request(
                    method, path, params=_encode(params or {}), json=json_body, headers=headers
                )
            except httpx.TimeoutException:
                timed_out = True
                last_error = (
                    f"The ERP at {self.base_url} did not answer within {self._http.timeout.read:g} s "
                    "(ERP_AGENT_ERP_TIMEOUT)"
                )
            except httpx.TransportError as exc:
                timed_out = False
                last_error = f"Cannot reach the ERP at {self.base_url} ({type(exc).__name__})"
            else:
                if response.status_code not in _RETRY_STATUSES or write:
                    return await self._handle(response, cred)
                last_error = f"The ERP failed with HTTP {response.status_code}"
                if attempt == attempts - 1:
                    return await self._handle(response, cred)
            if attempt < attempts - 1:
                await asyncio.sleep(self.backoff * (2**attempt) * (0.5 + random.random()))
        if write:
            last_error += "; the write was not retried — check in the ERP whether it happened"
        raise ErpTimeout(last_error) if timed_out else ErpUnavailable(last_error)

    async def _handle(self, response: httpx.Response, cred: Credential | None) -> Any:
        body = _json_body(response)
        if response.status_code < 400:
            return body
        refusal = refusal_from_response(response.status_code, body)
        if (
            response.status_code == 403
            and cred is not None
            and cred.sid
            and await self._session_ended(cred)
        ):
            raise ErpSessionExpired(
                f"The ERP session of {cred.user} has expired or was ended; sign in again."
            )
        if response.status_code == 401 and cred is not None:
            raise ErpAuthenticationError(
                f"The ERP refused the credentials of {cred.user}: {refusal.message}"
            )
        raise ErpRefusal(refusal)

    def _data(self, body: Any, path: str) -> Row:
        """The ``data`` document of a resource reply; any other shape is not the ERP's API."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, dict):
            raise ErpBadResponse(200, f"{self.base_url}{path}")
        return dict(data)

    async def _session_ended(self, cred: Credential) -> bool:
        """A stale sid makes Frappe treat the caller as Guest (403), not 401: ask who we are."""
        response = await self._http.get(
            "/api/method/frappe.auth.get_logged_user", headers=self._auth(cred)
        )
        return response.status_code != 200

    async def method(
        self, cred: Credential, path: str, /, *, write: bool = False, **args: Any
    ) -> Any:
        """Call ``/api/method/<path>`` and return its ``message``."""
        if write:
            body = await self.request(
                "POST", f"/api/method/{path}", cred, json_body=args, write=True
            )
        elif len(urllib.parse.urlencode(_encode(args))) > MAX_QUERY_STRING:
            # A long filter (a 5,000-value "in" list) does not fit a URL; Frappe's whitelisted
            # reads take the same arguments as a POST body. Still a read: retried as one.
            body = await self.request("POST", f"/api/method/{path}", cred, json_body=args)
        else:
            body = await self.request("GET", f"/api/method/{path}", cred, params=args)
        if not isinstance(body, dict):  # Frappe answers every method with a JSON object
            raise ErpBadResponse(200, f"{self.base_url}/api/method/{path}")
        return body.get("message")

    # ------------------------------------------------------------ auth and identity

    async def login(self, user: str, password: str) -> Credential:
        """Log in; only the ERP saying no to these credentials is an authentication error. A
        lockout is an ErpRefusal with the ERP's words; an ERP that is down, failing or not
        answering its API is ErpUnavailable, so nobody is told their password is wrong."""
        try:
            response = await self._http.post(
                "/api/method/login", json={"usr": user, "pwd": password}
            )
        except httpx.TimeoutException as exc:
            raise ErpTimeout(
                f"Cannot reach the ERP at {self.base_url}: it did not answer the sign-in "
                f"within {self._http.timeout.read:g} s (ERP_AGENT_ERP_TIMEOUT)"
            ) from exc
        except httpx.TransportError as exc:
            raise ErpUnavailable(
                f"Cannot reach the ERP at {self.base_url} ({type(exc).__name__})"
            ) from exc
        body = _json_body(response)
        if not isinstance(body, dict):  # Frappe's login answers a JSON object, whatever happens
            raise ErpBadResponse(response.status_code, str(response.request.url))
        if response.status_code != 200:
            refusal = refusal_from_response(response.status_code, body)
            if refusal.exc_type == "SecurityException":  # Frappe's lockout, sent as a 500
                raise ErpRefusal(refusal)
            if response.status_code >= 500:
                raise ErpUnavailable(
                    f"The ERP at {self.base_url} failed with HTTP {response.status_code} while "
                    f"signing in {user} (this is not a wrong password): {refusal.message}"
                )
            raise ErpAuthenticationError(f"Sign-in to the ERP failed for {user}: {refusal.message}")
        sid = response.cookies.get("sid")
        if not sid:
            raise ErpAuthenticationError(f"The ERP accepted {user} but set no session cookie")
        # A username (or Administrator typed in any case) signs in as the user id the ERP
        # names in its user_id cookie: every later call and record is keyed by that id.
        user_id = urllib.parse.unquote(response.cookies.get("user_id") or "") or user
        return Credential.session(user_id, sid)

    async def ping(self) -> None:
        """Frappe's unauthenticated liveness method; ErpUnavailable unless it answers 200."""
        try:
            response = await self._http.get("/api/method/ping", timeout=5.0)
        except httpx.TransportError as exc:
            raise ErpUnavailable(
                f"Cannot reach the ERP at {self.base_url} ({type(exc).__name__})"
            ) from exc
        if response.status_code != 200:
            raise ErpUnavailable(
                f"The ERP at {self.base_url} answered its health check with HTTP "
                f"{response.status_code}"
            )

    async def logout(self, cred: Credential) -> None:
        await self.request("POST", "/api/method/logout", cred, write=True)

    async def whoami(self, cred: Credential) -> str:
        path = "frappe.auth.get_logged_user"
        user = await self.method(cred, path)
        if not isinstance(user, str):
            raise ErpBadResponse(200, f"{self.base_url}/api/method/{path}")
        return user

    async def roles(self, cred: Credential, user: str | None = None) -> list[str]:
        """The user's role names. Anything but a list of names is not the ERP's answer: a
        session made from it would carry nonsense roles for its whole lifetime."""
        path = "frappe.core.doctype.user.user.get_roles"
        roles = await self.method(cred, path, uid=user or cred.user)
        if not isinstance(roles, list) or not all(_is_name(r) for r in roles):
            raise ErpBadResponse(200, f"{self.base_url}/api/method/{path}")
        return list(roles)

    async def user_named(self, cred: Credential, name: str) -> str | None:
        """The id of the User whose id, email or username is ``name`` (Frappe signs in with
        any of them), asked with ``cred``; None when there is no such user, or several."""
        found = await self.get_list(
            cred, "User", fields=["name"], page_length=2,
            or_filters=[["name", "=", name], ["email", "=", name], ["username", "=", name]],
        )  # fmt: skip
        names = {str(r.get("name")) for r in found if isinstance(r, dict) and r.get("name")}
        return names.pop() if len(names) == 1 else None

    async def version(self, cred: Credential) -> int:
        """The Frappe major version (15, 16, …), asked once and remembered."""
        if self._version is None:
            versions = await self.method(cred, "frappe.utils.change_log.get_versions")
            text = str((versions or {}).get("frappe", {}).get("version", "15"))
            self._version = int(text.split(".")[0])
        return self._version

    # ------------------------------------------------------------ data

    async def get_list(
        self,
        cred: Credential,
        doctype: str,
        *,
        fields: Sequence[Any] = ("name",),
        filters: Any = None,
        or_filters: Any = None,
        order_by: str | None = None,
        group_by: str | None = None,
        start: int = 0,
        page_length: int = 20,
    ) -> list[Row]:
        rows = await self.method(
            cred,
            "frappe.client.get_list",
            doctype=doctype,
            fields=list(fields),
            filters=filters,
            or_filters=or_filters,
            order_by=order_by,
            group_by=group_by,
            limit_start=start,
            limit_page_length=page_length,
        )
        if rows is not None and not isinstance(rows, list):
            raise ErpBadResponse(200, f"{self.base_url}/api/method/frappe.client.get_list")
        return list(rows or [])

    async def get_count(self, cred: Credential, doctype: str, filters: Any = None) -> int:
        # reportview.get_count applies permissions in every version; v15's
        # frappe.client.get_count does not, so it is never used.
        count = await self.method(
            cred, "frappe.desk.reportview.get_count", doctype=doctype, filters=filters
        )
        if isinstance(count, bool) or not isinstance(count, (int, float, str)):
            raise ErpBadResponse(
                200, f"{self.base_url}/api/method/frappe.desk.reportview.get_count"
            )
        try:
            return int(count)
        except ValueError:
            raise ErpBadResponse(
                200, f"{self.base_url}/api/method/frappe.desk.reportview.get_count"
            ) from None

    async def get_doc(self, cred: Credential, doctype: str, name: str) -> Row:
        doc = await self.method(cred, "frappe.client.get", doctype=doctype, name=name)
        if not isinstance(doc, dict):
            raise ErpBadResponse(200, f"{self.base_url}/api/method/frappe.client.get")
        return dict(doc)

    async def insert(self, cred: Credential, doctype: str, values: Mapping[str, Any]) -> Row:
        body = await self.request(
            "POST", f"/api/resource/{doctype}", cred, json_body=dict(values), write=True
        )
        return self._data(body, f"/api/resource/{doctype}")

    async def update(
        self, cred: Credential, doctype: str, name: str, values: Mapping[str, Any]
    ) -> Row:
        body = await self.request(
            "PUT", f"/api/resource/{doctype}/{name}", cred, json_body=dict(values), write=True
        )
        return self._data(body, f"/api/resource/{doctype}/{name}")

    async def run_doc_method(self, cred: Credential, doctype: str, name: str, method: str) -> Row:
        body = await self.request(
            "POST",
            f"/api/resource/{doctype}/{name}",
            cred,
            params={"run_method": method},
            write=True,
        )
        return self._data(body, f"/api/resource/{doctype}/{name}")

    async def delete(self, cred: Credential, doctype: str, name: str) -> None:
        await self.request("DELETE", f"/api/resource/{doctype}/{name}", cred, write=True)

    async def run_report(
        self,
        cred: Credential,
        report: str,
        filters: Mapping[str, Any],
        *,
        ignore_prepared_report: bool = True,
    ) -> Row:
        result = await self.method(
            cred,
            "frappe.desk.query_report.run",
            report_name=report,
            filters=dict(filters),
            ignore_prepared_report=int(ignore_prepared_report),
        )
        return dict(result or {})

    async def getdoctype(self, cred: Credential, doctype: str) -> list[Row]:
        body = await self.request(
            "GET", "/api/method/frappe.desk.form.load.getdoctype", cred, params={"doctype": doctype}
        )
        if not isinstance(body, dict) or not isinstance(body.get("docs"), list):
            raise ErpBadResponse(
                200, f"{self.base_url}/api/method/frappe.desk.form.load.getdoctype"
            )
        return list(body["docs"])

    async def get_transitions(self, cred: Credential, doc: Mapping[str, Any]) -> list[Row]:
        return list(
            await self.method(cred, "frappe.model.workflow.get_transitions", doc=dict(doc)) or []
        )

    async def apply_workflow(self, cred: Credential, doc: Mapping[str, Any], action: str) -> Row:
        return dict(
            await self.method(
                cred,
                "frappe.model.workflow.apply_workflow",
                write=True,
                doc=dict(doc),
                action=action,
            )
        )

    async def has_permission(
        self, cred: Credential, doctype: str, ptype: str, name: str | None = None
    ) -> bool:
        path = "frappe.client.has_permission"
        result = await self.method(cred, path, doctype=doctype, perm_type=ptype, docname=name)
        if not isinstance(result, dict) or "has_permission" not in result:
            raise ErpBadResponse(200, f"{self.base_url}/api/method/{path}")
        return bool(result["has_permission"])

    async def report_access(self, cred: Credential, report: str) -> bool:
        """Whether the user may run ``report``: Frappe's get_script runs the same checks as run."""
        try:
            await self.method(cred, "frappe.desk.query_report.get_script", report_name=report)
        except ErpRefusal as exc:
            if exc.refusal.status in (403, 404):
                return False
            raise
        return True
