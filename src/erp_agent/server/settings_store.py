"""Admin changes survive a restart: stored in the server's table, the model key sealed."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import SecretStr

from erp_agent.errors import ConfigError
from erp_agent.gateway.policy import parse_policy
from erp_agent.server.models import ModelChoice, ModelSwitch
from erp_agent.server.state import ServerState

log = logging.getLogger(__name__)


async def save_model(state: ServerState, choice: ModelChoice) -> None:
    stored: dict[str, Any] = choice.model_dump(exclude={"api_key"})
    if choice.api_key is not None:
        stored["api_key_sealed"] = state.vault.seal_text(choice.api_key.get_secret_value())
    else:
        previous = await state.db.get_setting("model")
        if isinstance(previous, dict) and previous.get("api_key_sealed"):
            stored["api_key_sealed"] = previous["api_key_sealed"]
    await state.db.set_setting("model", stored)


async def load(state: ServerState) -> None:
    """Apply what an administrator set before this process started."""
    policy = await state.db.get_setting("policy")
    if policy is not None:
        try:
            state.runtime.policy = parse_policy(policy, "stored policy")
        except ConfigError:
            log.warning("The stored role policy is not valid; using the configured one.")
    read_only = await state.db.get_setting("read_only")
    if isinstance(read_only, bool):
        state.read_only = state.read_only or read_only
    budgets = await state.db.get_setting("budgets")
    if isinstance(budgets, dict):
        state.budgets.update({str(k): int(v) for k, v in budgets.items()})
    model = await state.db.get_setting("model")
    if isinstance(state.models, ModelSwitch) and isinstance(model, dict):
        sealed = model.pop("api_key_sealed", None)
        key = state.vault.open_text(sealed) if sealed else None
        try:
            await state.models.switch(ModelChoice(**model, api_key=SecretStr(key) if key else None))
        except (ConfigError, ValueError):
            log.warning("The stored model choice could not be applied; keeping the default.")
