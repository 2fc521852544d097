"""Admin changes (model, policy, read-only, budgets) live in the store, so every worker applies
the same ones: each worker re-reads them when its copy is older than ``REFRESH_SECONDS`` (on the
next request), and the worker that made a change applies it at once. The model key is sealed.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pydantic import SecretStr

from erp_agent.errors import ConfigError, ErpAgentError
from erp_agent.gateway.policy import load_policy, parse_policy
from erp_agent.server.model_switch import ModelChoice, ModelSwitch
from erp_agent.server.state import ServerState

log = logging.getLogger(__name__)
REFRESH_SECONDS = 2.0
ENVIRONMENT = {"use": "environment"}  # the stored "model" that means: the environment's
UNREADABLE_MODEL_KEY = (
    "The model key an administrator stored cannot be opened with ERP_AGENT_SESSION_KEY (the "
    "key was changed without keeping the old one). The stored model choice is not applied; "
    "put the old key after the new one (NEW,OLD) and restart, or set the model again."
)


async def reseal(state: ServerState) -> None:
    """After a key rotation: what an older key sealed is sealed again with the first key.
    A value no configured key opens is kept as it is (never dropped) and reported."""
    if state.vault.key_count < 2:
        return
    lost = 0
    for token_hash, sealed in await state.store.web_session_credentials():
        fresh = state.vault.reseal(sealed)
        if fresh is None:
            lost += 1
        else:
            await state.store.update_web_session_credential(token_hash, fresh)
    if lost:
        log.warning(
            "%d web session(s) were sealed with a key no longer configured; those users "
            "sign in again.",
            lost,
        )
    # The ERP credentials behind channel API keys (MCP, OpenAI-compatible): one per user.
    resealed: set[str] = set()
    for record in await state.store.list_api_keys():
        if not record.credential or record.user in resealed or record.revoked_at is not None:
            continue
        fresh = state.vault.reseal(record.credential.encode())
        if fresh is None:
            message = (
                f"The ERP credential behind {record.user}'s API keys cannot be opened with "
                "ERP_AGENT_SESSION_KEY; put the old key back after the new one, or issue the "
                "keys again."
            )
            log.error(message)
            state.problems.append(message)
        else:
            await state.store.set_api_key_credentials(record.user, fresh.decode())
        resealed.add(record.user)
    model = (await state.store.admin_settings()).get("model")
    if isinstance(model, dict) and model.get("api_key_sealed"):
        fresh = state.vault.reseal(str(model["api_key_sealed"]).encode())
        if fresh is not None:
            await state.store.set_admin_setting("model", model | {"api_key_sealed": fresh.decode()})


async def save(state: ServerState, key: str, value: Any) -> None:
    await state.store.set_admin_setting(key, value)
    state.applied[key] = value  # applied here already by the caller


async def save_model(state: ServerState, choice: ModelChoice) -> None:
    stored: dict[str, Any] = choice.model_dump(exclude={"api_key"})
    if choice.api_key is not None:
        stored["api_key_sealed"] = state.vault.seal_text(choice.api_key.get_secret_value())
    else:
        previous = (await state.store.admin_settings()).get("model")
        same_endpoint = isinstance(previous, dict) and (
            previous.get("provider"),
            previous.get("base_url") or None,
        ) == (choice.provider, choice.base_url or None)
        if same_endpoint and isinstance(previous, dict) and previous.get("api_key_sealed"):
            stored["api_key_sealed"] = previous["api_key_sealed"]
    await save(state, "model", stored)


async def sync(state: ServerState, *, force: bool = False) -> None:
    """Apply what is stored if this worker's copy is stale (never raises: a store that cannot
    be read keeps the settings last applied)."""
    if not force and time.monotonic() - state.settings_read_at < REFRESH_SECONDS:
        return
    state.settings_read_at = time.monotonic()
    try:
        stored = await state.store.admin_settings()
    except ErpAgentError as exc:
        log.warning("The admin settings could not be read (%s); keeping the last ones.", exc)
        return
    for key, value in stored.items():
        if state.applied.get(key) == value:
            continue
        state.applied[key] = value
        await _apply(state, key, value)


async def load(state: ServerState) -> None:
    """Apply what an administrator set before this process started."""
    await sync(state, force=True)


async def _apply(state: ServerState, key: str, value: Any) -> None:
    if key == "policy" and value == ENVIRONMENT:
        state.runtime.policy = load_policy()
    elif key == "policy":
        try:
            state.runtime.policy = parse_policy(value, "stored policy")
        except ConfigError:
            log.warning("The stored role policy is not valid; using the configured one.")
    elif key == "read_only" and isinstance(value, bool):
        state.read_only = state.configured_read_only or value
    elif key == "budgets" and isinstance(value, dict):
        state.runtime.budgets.limits = {str(k): int(v) for k, v in value.items()}
    elif key == "model" and isinstance(state.models, ModelSwitch) and isinstance(value, dict):
        if value == ENVIRONMENT:
            await state.models.use_configured()
            return
        choice = dict(value)
        sealed = choice.pop("api_key_sealed", None)
        secret = state.vault.open_text(sealed) if sealed else None
        if sealed and secret is None:
            # Never applied without its key (that would silently drop it): the current model
            # stays until the old session key is back in ERP_AGENT_SESSION_KEY.
            log.error(UNREADABLE_MODEL_KEY)
            if UNREADABLE_MODEL_KEY not in state.problems:
                state.problems.append(UNREADABLE_MODEL_KEY)
            return
        try:
            # Tried already by the worker where the administrator made the change.
            await state.models.switch(
                ModelChoice(**choice, api_key=SecretStr(secret) if secret else None), probe=False
            )
        except (ConfigError, ValueError):
            log.warning("The stored model choice could not be applied; keeping the current one.")
            return
        log.warning(
            "Using the model set in the admin console (%s %s) instead of the environment's; "
            "the admin console's 'Use the environment's model' goes back.",
            choice.get("provider"),
            choice.get("model"),
        )
