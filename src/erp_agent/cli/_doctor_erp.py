"""`erp-agent doctor`'s checks that sign in to the ERP: the sync user (the scheduled and manual
record sync read as it), a sample user (`--as USER`: can they sign in, and may they use the
agent?), and the search index's counts against the ERP's (a card whose record is gone is still
found by search until a full sync drops it)."""

from __future__ import annotations

import asyncio
from collections import Counter

from erp_agent.cli._doctor_types import Check
from erp_agent.config import Settings
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ErpAgentError


def _words(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


async def sync_user_check(
    settings: Settings, connector: Connector
) -> tuple[Check, Credential | None]:
    retrieval = settings.retrieval
    if not retrieval.sync_user or retrieval.sync_password is None:
        if settings.scheduled_sync_seconds:
            return Check("sync user", "FAIL", "ERP_AGENT_SCHEDULED_SYNC_SECONDS is set but "
                         "ERP_AGENT_SYNC_USER/ERP_AGENT_SYNC_PASSWORD are not"), None  # fmt: skip
        return Check("sync user", "ok", "off (ERP_AGENT_SYNC_USER unset)"), None
    user = retrieval.sync_user
    try:
        cred = await connector.login(user, retrieval.sync_password.get_secret_value())
        roles = await connector.roles(cred)
    except ErpAgentError as exc:
        return Check("sync user", "FAIL", f"{user}: {_words(exc)}"), None
    return Check("sync user", "ok", f"signed in as {user} ({len(roles)} roles)"), cred


async def sample_user_check(settings: Settings, connector: Connector, user: str | None) -> Check:
    if not user:
        return Check("sample user", "warn", "none: `erp-agent doctor --as USER` (password in "
                     "ERP_AGENT_PASSWORD) signs in as one and checks they may use the agent")  # fmt: skip
    if settings.password is None:
        return Check("sample user", "FAIL", f"--as {user} needs ERP_AGENT_PASSWORD")
    try:
        cred = await connector.login(user, settings.password.get_secret_value())
        roles = await connector.roles(cred)
    except ErpAgentError as exc:
        return Check("sample user", "FAIL", f"{user}: {_words(exc)}")
    allowed = settings.server.allowed_roles
    if allowed and not set(allowed) & set(roles):
        return Check("sample user", "FAIL", f"{user} signs in but may not use the agent: none "
                     f"of their roles is in ERP_AGENT_ALLOWED_ROLES ({', '.join(allowed)})")  # fmt: skip
    return Check("sample user", "ok", f"signed in as {user}; roles {', '.join(sorted(roles)[:6])}"
                 + (" …" if len(roles) > 6 else ""))  # fmt: skip


async def index_check(
    settings: Settings, connector: Connector | None, sync: Credential | None
) -> Check:
    """Opens the index; its counts add up (cards = listed keys; keyword-only ≤ cards), and each
    synced entity has no more cards than the ERP has records (read as the sync user)."""
    from erp_agent.retrieval.settings import index_url, open_index
    from erp_agent.retrieval.sync import watermark_name

    url = index_url(settings)
    where = url.split("@")[-1] if "@" in url else url
    tenant = settings.retrieval.index_tenant
    try:
        index = await asyncio.to_thread(open_index, settings)
    except ErpAgentError as exc:
        return Check("index", "FAIL", f"{where}: {_words(exc)}{_superuser_hint(exc)}")
    except Exception as exc:  # a driver's own error (no such host, bad file): one line
        return Check("index", "FAIL", f"{where}: {type(exc).__name__}: {_words(exc)}"
                     f"{_superuser_hint(exc)}")  # fmt: skip
    try:
        total = await asyncio.to_thread(index.count, tenant)
        keys = await asyncio.to_thread(index.keys, tenant)
        pending = await asyncio.to_thread(index.pending_count, tenant)
        cards = Counter(k.split(":", 1)[0] for k in keys if ":" in k and "#" not in k)
        synced = {e: n for e, n in cards.items() if index.state(tenant, watermark_name(e))}
    except Exception as exc:
        return Check("index", "FAIL", f"{where}: {type(exc).__name__}: {_words(exc)}")
    finally:
        index.close()
    problems = []
    if len(keys) != total:
        problems.append(f"it counts {total:,} cards but lists {len(keys):,}")
    if not 0 <= pending <= total:
        problems.append(f"{pending:,} cards wait for a vector, of {total:,}")
    if connector is not None and sync is not None:
        for entity, held in sorted(synced.items()):
            try:
                records = await connector.count(sync, entity)
            except ErpAgentError:
                continue  # not readable as the sync user: the sync user check says so
            if held > records:
                problems.append(
                    f"{held:,} {entity} cards but the ERP has {records:,} records: records "
                    "deleted in the ERP are still found; run `erp-agent sync --full`"
                )
    if problems:
        return Check("index", "FAIL", f"{where}: " + "; ".join(problems))
    checked = f", {len(synced)} synced entities within the ERP's counts" if sync else ""
    return Check("index", "ok", f"{where}: {total:,} cards, {total - pending:,} with vectors"
                 f"{checked}; embeddings {settings.retrieval.embeddings}")  # fmt: skip


def _superuser_hint(exc: BaseException) -> str:
    said = str(exc)
    if "CREATE EXTENSION vector" in said:  # the index says what to do already
        return ""
    if "extension" in said and ("permission" in said or "superuser" in said):
        return (
            " — the pgvector extension needs a superuser once: `CREATE EXTENSION vector;` "
            "in this database (docs/deployment.md)"
        )
    return ""
