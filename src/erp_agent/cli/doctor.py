"""`erp-agent doctor`: the configuration checked end to end, one line per check.

Every configured part is asked, as the server will ask it: the ERP (reachable, the service
credential, the sync user, a sample user with ``--as``), the session key, the model (a one-token
call), the store (its migrations at head), Redis (a ping, a write and a read), the queue's broker
(connect and declare with the configured credentials), a queue worker (a ping task through the
turns' queue), the search index (counts that add up, against the ERP's), the proxy settings and
the public address (TLS, HSTS, the scheme and prefix the proxy passes on), single sign-on.

Each check prints ``ok``, ``warn`` or ``FAIL`` with what it found; the exit status is 1 when any
check fails. Nothing here prints a secret: keys are reported as set or not, and by count.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import httpx
import typer

from erp_agent.cli._common import console
from erp_agent.cli._doctor_types import Check, Status
from erp_agent.config import Settings, load_settings
from erp_agent.errors import ErpAgentError

STYLE = {"ok": "green", "warn": "yellow", "FAIL": "red"}


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
    from erp_agent.server.model_switch import try_model

    try:
        built = build_model(model)
        await try_model(built, model)
        await built.aclose()
    except ErpAgentError as exc:
        return Check("model", "FAIL", str(exc))
    return Check("model", "ok", f"{model.provider} {model.model} answered a one-token call")


async def _store(settings: Settings) -> Check:
    """Reachable, and its schema at the migrations' head (read only: the server migrates at
    start; a revision this version does not know is a newer version's schema)."""
    from erp_agent.store import schema
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
        version = await store.schema_version()  # type: ignore[attr-defined]
    except ErpAgentError as exc:
        return Check("store", "FAIL", f"{where}: {exc}")
    except Exception as exc:  # a driver's own error: one line, never a traceback
        return Check("store", "FAIL", f"{where}: {type(exc).__name__}: {exc}")
    finally:
        await store.close()
    head = await asyncio.to_thread(schema.head_revision)
    if version == head:
        return Check("store", "ok", f"{where}: migrations at head ({head})")
    if version is None:
        return Check("store", "warn", f"{where}: empty; migrated to {head} at the first start")
    known = await asyncio.to_thread(_revisions)
    if version not in known:
        return Check("store", "FAIL", f"{where}: at revision {version}, which this version does "
                     "not know (migrated by a newer erp-agent?): upgrade this checkout")  # fmt: skip
    return Check("store", "warn", f"{where}: at {version}, head is {head}: migrated at the next "
                 "start")  # fmt: skip


def _revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    from erp_agent.store import schema

    scripts = ScriptDirectory.from_config(schema.alembic_config())
    return {script.revision for script in scripts.walk_revisions()}


def _proxy(settings: Settings) -> Check:
    from erp_agent.server.proxy import normal_prefix, parse_networks

    server = settings.server
    try:
        parse_networks(server.trusted_proxies)
    except ErpAgentError as exc:
        return Check("proxy", "FAIL", str(exc))
    prefix = normal_prefix(server.root_path)
    if prefix is None:
        return Check("proxy", "FAIL", f"ERP_AGENT_ROOT_PATH={server.root_path!r} is not a path "
                     "prefix such as /agent: the server refuses to start")  # fmt: skip
    root = f"{prefix or '/'} (or a trusted proxy's X-Forwarded-Prefix)"
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


async def _with_the_erp(settings: Settings, sample: str | None) -> list[Check]:
    """The checks that sign in (the sync user, a sample user) and the index, whose counts are
    compared with the ERP's as the sync user."""
    from erp_agent.cli._common import connector_from
    from erp_agent.cli._doctor_erp import index_check, sample_user_check, sync_user_check

    try:
        connector = connector_from(settings)
    except ErpAgentError as exc:
        return [Check("sync user", "FAIL", str(exc))]
    try:
        sync, credential = await sync_user_check(settings, connector)
        sampled = await sample_user_check(settings, connector, sample)
        return [sync, sampled, await index_check(settings, connector, credential)]
    finally:
        await connector.aclose()


async def run_checks(settings: Settings, sample: str | None = None) -> list[Check]:
    from erp_agent.cli._doctor_plans import plan_checks
    from erp_agent.cli._doctor_services import public_check, queue_checks, redis_check

    checks = await _erp(settings)
    erp_up = checks[0].status != "FAIL"
    checks.append(_secrets(settings))
    checks.append(await _model(settings))
    checks.append(await _store(settings))
    checks.extend(await plan_checks(settings))
    checks.append(await redis_check(settings))
    checks.extend(await queue_checks(settings))
    if erp_up:
        checks.extend(await _with_the_erp(settings, sample))
    else:
        from erp_agent.cli._doctor_erp import index_check

        checks.append(Check("sync user", "warn", "not checked: the ERP is not reachable"))
        checks.append(await index_check(settings, None, None))  # its counts alone
    checks.append(_proxy(settings))
    checks.append(await public_check(settings))
    checks.append(await _sso(settings))
    return checks


def doctor(
    sample: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Also sign in as this ERP user (password in ERP_AGENT_PASSWORD) and check "
            "they may use the agent.",
        ),
    ] = None,
) -> None:
    """Check the configuration end to end (ERP, users, key, model, store, Redis, queue and
    worker, index, proxy, single sign-on): one line per check; exit 1 if any fails."""
    try:
        settings = load_settings()
    except (ErpAgentError, ValueError) as exc:
        console.print(_line(Check("configuration", "FAIL", str(exc))), soft_wrap=True)
        raise typer.Exit(1) from exc
    console.print(_line(Check("configuration", "ok", f"{settings.server.mode} mode")))
    checks = asyncio.run(run_checks(settings, sample))
    for check in checks:
        console.print(_line(check), soft_wrap=True)
    if any(c.status == "FAIL" for c in checks):
        raise typer.Exit(1)
