"""`erp-agent doctor`: the configuration checked end to end, one line per check.

Each check prints ``ok``, ``warn`` or ``FAIL`` with what it found; the exit status is 1 when any
check fails. Nothing here prints a secret: keys are reported as set or not, and by count.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
import typer

from erp_agent.cli._common import console
from erp_agent.config import Settings, load_settings
from erp_agent.errors import ErpAgentError

Status = Literal["ok", "warn", "FAIL"]
STYLE = {"ok": "green", "warn": "yellow", "FAIL": "red"}


@dataclass
class Check:
    name: str
    status: Status
    detail: str


def _line(check: Check) -> str:
    mark = f"[{STYLE[check.status]}]{check.status:<4}[/]"
    return f"{mark} {check.name:<16} {' '.join(check.detail.split())}"


async def _erp(settings: Settings) -> list[Check]:
    base = settings.erp_url.rstrip("/")
    try:
        async with httpx.AsyncClient(base_url=base, timeout=settings.erp_timeout) as http:
            started = time.perf_counter()
            ping = await http.get("/api/method/ping")
            took = (time.perf_counter() - started) * 1000
            if ping.status_code != 200:
                return [Check("erp", "FAIL", f"{base} answered HTTP {ping.status_code} to ping")]
            checks = [Check("erp", "ok", f"{base} reachable ({took:.0f} ms)")]
            checks.append(await _service(settings, http))
            return checks
    except httpx.HTTPError as exc:
        return [Check("erp", "FAIL", f"Cannot reach the ERP at {base} ({type(exc).__name__})")]


async def _service(settings: Settings, http: httpx.AsyncClient) -> Check:
    """The service credential, and the ERP's version as it reports it."""
    if not (settings.service_user and settings.service_api_key and settings.service_api_secret):
        return Check(
            "service user",
            "warn",
            "no service credential (ERP_AGENT_SERVICE_USER/API_KEY/API_SECRET): roles and "
            "metadata are read with each user's own credential",
        )
    key = settings.service_api_key.get_secret_value()
    secret = settings.service_api_secret.get_secret_value()
    auth = {"Authorization": f"token {key}:{secret}"}
    who = await http.get("/api/method/frappe.auth.get_logged_user", headers=auth)
    if who.status_code != 200:
        return Check(
            "service user", "FAIL", f"the ERP refused the service key (HTTP {who.status_code})"
        )
    versions = await http.get("/api/method/frappe.utils.change_log.get_versions", headers=auth)
    found = versions.json().get("message", {}) if versions.status_code == 200 else {}
    frappe_version = (found.get("frappe") or {}).get("version", "unknown")
    erpnext = (found.get("erpnext") or {}).get("version")
    made = f"Frappe {frappe_version}" + (f", ERPNext {erpnext}" if erpnext else "")
    return Check("service user", "ok", f"signed in as {who.json().get('message')}; {made}")


def _secrets(settings: Settings) -> Check:
    if settings.session_key is None:
        status: Status = "FAIL" if settings.server.mode == "production" else "warn"
        return Check(
            "session key",
            status,
            "ERP_AGENT_SESSION_KEY is not set: sessions and stored model keys end at restart"
            + (" (production mode refuses to start)" if status == "FAIL" else ""),
        )
    from erp_agent.server.security import Vault

    try:
        vault = Vault(settings.session_key.get_secret_value())
    except ErpAgentError as exc:
        return Check("session key", "FAIL", str(exc))
    rotation = " (rotation: the first seals, all open)" if vault.key_count > 1 else ""
    return Check("session key", "ok", f"{vault.key_count} key(s) set{rotation}")


async def _model(settings: Settings) -> Check:
    model = settings.reasoning_model
    if model is None:
        return Check("model", "warn", "no reasoning model: the offline planner answers")
    from erp_agent.models.registry import build_model
    from erp_agent.server.models import _try

    try:
        built = build_model(model)
        await _try(built, model)
        await built.aclose()
    except ErpAgentError as exc:
        return Check("model", "FAIL", str(exc))
    return Check("model", "ok", f"{model.provider} {model.model} answered a one-token call")


async def _store(settings: Settings) -> Check:
    from erp_agent.store.sql_store import open_store

    url = (
        settings.database_url
        or f"sqlite+aiosqlite:///{Path(settings.data_dir) / 'erp-agent.sqlite'}"
    )
    where = url.split("@")[-1] if "@" in url else url  # never the password of a DSN
    if url.startswith("sqlite"):
        Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    store = open_store(url)
    try:
        await store.migrate()
    except ErpAgentError as exc:
        return Check("store", "FAIL", f"{where}: {exc}")
    finally:
        await store.close()
    return Check("store", "ok", f"{where} (migrated)")


def _index(settings: Settings) -> Check:
    from erp_agent.retrieval.settings import index_url, open_index

    url = index_url(settings)
    where = url.split("@")[-1] if "@" in url else url
    try:
        index = open_index(settings)
        close = getattr(index, "close", None)
        if callable(close):
            close()
    except ErpAgentError as exc:
        return Check("index", "FAIL", f"{where}: {exc}")
    except Exception as exc:  # a driver's own error (no such host, bad file): one line
        return Check("index", "FAIL", f"{where}: {type(exc).__name__}: {exc}")
    return Check("index", "ok", f"{where}; embeddings {settings.retrieval.embeddings}")


def _proxy(settings: Settings) -> Check:
    from erp_agent.server.proxy import parse_networks

    server = settings.server
    try:
        parse_networks(server.trusted_proxies)
    except ErpAgentError as exc:
        return Check("proxy", "FAIL", str(exc))
    root = server.root_path or "/"
    hsts = f"HSTS {server.hsts_seconds} s" if server.hsts_seconds else "no HSTS"
    return Check(
        "proxy",
        "ok",
        f"forwarded headers trusted from {', '.join(server.trusted_proxies) or 'nobody'}; "
        f"root path {root}; {hsts}",
    )


async def _sso(settings: Settings) -> Check:
    if not settings.oauth.client_id:
        return Check("single sign-on", "ok", "off (ERP_AGENT_OAUTH_CLIENT_ID unset)")
    url = f"{settings.erp_url.rstrip('/')}/api/method/frappe.integrations.oauth2.get_token"
    try:
        async with httpx.AsyncClient(timeout=settings.erp_timeout) as http:
            reply = await http.post(url, data={"grant_type": "authorization_code", "code": "-",
                                              "client_id": settings.oauth.client_id})  # fmt: skip
    except httpx.HTTPError as exc:
        return Check("single sign-on", "FAIL", f"{url}: {type(exc).__name__}")
    body = reply.json() if "json" in reply.headers.get("content-type", "") else {}
    if body.get("error") == "invalid_client":
        return Check("single sign-on", "FAIL", "the ERP does not know this OAuth client id")
    if body.get("error") == "invalid_grant":  # the provider answered and knows the client
        return Check("single sign-on", "ok", f"client {settings.oauth.client_id} known to the ERP")
    return Check(
        "single sign-on", "warn", f"unexpected answer from {url}: HTTP {reply.status_code}"
    )


async def run_checks(settings: Settings) -> list[Check]:
    steps: list[Callable[[], Awaitable[list[Check]] | list[Check]]] = [
        lambda: _erp(settings),
        lambda: [_secrets(settings)],
        lambda: _one(_model(settings)),
        lambda: _one(_store(settings)),
        lambda: [_index(settings)],
        lambda: [_proxy(settings)],
        lambda: _one(_sso(settings)),
    ]
    checks: list[Check] = []
    for step in steps:
        result = step()
        checks.extend(await result if not isinstance(result, list) else result)
    return checks


async def _one(check: Awaitable[Check]) -> list[Check]:
    return [await check]


def doctor() -> None:
    """Check the configuration end to end (ERP, service user, key, model, store, index,
    proxy, single sign-on): one line per check; exit 1 if any fails."""
    try:
        settings = load_settings()
    except (ErpAgentError, ValueError) as exc:
        console.print(_line(Check("configuration", "FAIL", str(exc))), soft_wrap=True)
        raise typer.Exit(1) from exc
    console.print(_line(Check("configuration", "ok", f"{settings.server.mode} mode")))
    checks = asyncio.run(run_checks(settings))
    for check in checks:
        console.print(_line(check), soft_wrap=True)
    if any(c.status == "FAIL" for c in checks):
        raise typer.Exit(1)
