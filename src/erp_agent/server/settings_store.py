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
from erp_agent.gateway.policy import parse_policy
from erp_agent.server.models import ModelChoice, ModelSwitch
from erp_agent.server.state import ServerState

log = logging.getLogger(__name__)
REFRESH_SECONDS = 2.0


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
    if key == "policy":
        try:
            state.runtime.policy = parse_policy(value, "stored policy")
        except ConfigError:
            log.warning("The stored role policy is not valid; using the configured one.")
    elif key == "read_only" and isinstance(value, bool):
        state.read_only = state.configured_read_only or value
    elif key == "budgets" and isinstance(value, dict):
        state.runtime.budgets.limits = {str(k): int(v) for k, v in value.items()}
    elif key == "model" and isinstance(state.models, ModelSwitch) and isinstance(value, dict):
        choice = dict(value)
        sealed = choice.pop("api_key_sealed", None)
        secret = state.vault.open_text(sealed) if sealed else None
        try:
            # Tried already by the worker where the administrator made the change.
            await state.models.switch(
                ModelChoice(**choice, api_key=SecretStr(secret) if secret else None), probe=False
            )
        except (ConfigError, ValueError):
            log.warning("The stored model choice could not be applied; keeping the current one.")
