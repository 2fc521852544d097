"""One assembly for every process that answers turns: settings with the model a command names,
the runtime, the model that answers a turn, the admin's knowledge upload and the web app or the
queue worker's state over them. ``serve`` (one process or several), every demo, the queue
worker and the CLI's own commands build through here, so they cannot drift apart.

It sits beside ``runtime.py``, above the server's package, so a command's ``--help`` loads
neither. The model for a turn is decided here and nowhere else: a model named with ``--model`` (put in
the settings by ``configure``), else the configured one, and an administrator may switch
providers at run time (the settings store's overlay); ``offline`` is the planner. A process
started by another (``serve --workers``, ``worker``) gets the named model through
``hand_over``/``handed_over``, the one variable both use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from erp_agent.config import ENDPOINT_FIELDS, ModelSettings, Settings, load_settings
from erp_agent.errors import ConfigError
from erp_agent.models.presets import PRESETS, split

if TYPE_CHECKING:  # the runtime and the planner load in seconds: only when a command runs
    from fastapi import FastAPI

    from erp_agent.models.base import ChatModel
    from erp_agent.runtime import Runtime
    from erp_agent.server.knowledge import IndexedKnowledge
    from erp_agent.server.model_switch import ModelSwitch
    from erp_agent.server.state import ServerState

OFFLINE = "offline"
TUNABLE = tuple(n for n in ModelSettings.model_fields if n not in ENDPOINT_FIELDS)
# `serve --workers N --model …` and `worker --model …`: the model, handed to the processes
# they start (uvicorn's workers import the app; Celery's worker runs the task module).
MODEL_VARIABLE, BASE_URL_VARIABLE = "ERP_AGENT_SERVE_MODEL", "ERP_AGENT_SERVE_BASE_URL"


def model_options(given: Sequence[str] | None) -> dict[str, str]:
    """``--model-setting NAME=VALUE`` pairs, each name checked (values are checked with the
    model's settings)."""
    out: dict[str, str] = {}
    for item in given or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in TUNABLE:
            raise ConfigError(
                f"--model-setting {item!r}: give NAME=VALUE with NAME one of {', '.join(TUNABLE)}."
            )
        out[name] = value.strip()
    return out


def configure(
    settings: Settings | None,
    model: str | None,
    base_url: str | None = None,
    options: Sequence[str] | None = None,
) -> Settings:
    """The settings (``settings``, or loaded now) with the reasoning model ``--model`` /
    ``--base-url`` / ``--model-setting`` name (unchanged for none or ``offline``). A model
    named here takes every other model setting configured (timeout, window, retries…) with
    it. The key is checked now, with the variable to set, rather than at the first
    question."""
    chosen = model_options(options)
    if model is None or model == OFFLINE:
        if base_url:
            raise ConfigError("--base-url needs --model PRESET:NAME (e.g. ollama:qwen2.5:7b).")
        if chosen:
            raise ConfigError("--model-setting needs --model PRESET:NAME (e.g. ollama:qwen2.5:7b).")
        return settings if settings is not None else load_settings()
    if split(model) is None:
        raise ConfigError(
            f"--model {model!r} is not understood. Use --model offline, or PRESET:NAME with "
            f"PRESET one of {', '.join(PRESETS)} (e.g. --model openai:gpt-4.1, or --model "
            "openai-compatible:NAME --base-url http://HOST:PORT/v1)."
        )
    # ERP_AGENT_MODEL_API_KEY_ENV and the other model settings go with the model named here.
    loaded = load_settings(model=model, base_url=base_url, options=chosen)
    configured = (
        loaded
        if settings is None
        else settings.model_copy(update={"reasoning_model": loaded.reasoning_model})
    )
    assert configured.reasoning_model is not None
    configured.reasoning_model.key()
    return configured


def hand_over(model: str | None, base_url: str | None = None) -> None:
    """Name the model for the processes this one starts (see ``handed_over``)."""
    for name, value in ((MODEL_VARIABLE, model), (BASE_URL_VARIABLE, base_url)):
        if value:
            os.environ[name] = value


def handed_over() -> tuple[str | None, str | None]:
    """The model (and its address) the starting process named, if any."""
    return os.environ.get(MODEL_VARIABLE) or None, os.environ.get(BASE_URL_VARIABLE) or None


def model_for(runtime: Runtime, spec: str | None) -> ChatModel:
    """The model a terminal command uses. ``spec`` other than offline was put in the runtime's
    settings by ``configure``: it is served without falling back to the planner, so a failing
    endpoint says so instead of being answered by something else."""
    if spec is None:
        # The configured model with retries, rate gate and budget, or the offline planner.
        return runtime.default_model()
    if spec == OFFLINE:
        return offline(runtime)
    return runtime.models.model("reasoning", org="default")


def offline(runtime: Runtime) -> ChatModel:
    from erp_agent.planner import OfflinePlanner

    return OfflinePlanner(runtime.catalog, runtime.connector.name)


def describe(settings: Settings) -> str:
    configured = settings.reasoning_model
    return f"{configured.provider}:{configured.model}" if configured else OFFLINE


def model_switch(runtime: Runtime, model: str | None) -> ModelSwitch:
    """What the server asks for a turn's model. A model named with ``--model`` (already in the
    runtime's settings, see ``configure``) or the configured one serves first, and an admin may
    switch providers at run time; ``--model offline`` serves the planner."""
    from erp_agent.server.model_switch import ModelSwitch

    configured = runtime.models.settings("reasoning") is not None
    registry = runtime.models if model != OFFLINE and configured else None
    return ModelSwitch(
        lambda: offline(runtime),
        registry=registry,
        local_name="offline-planner",
    )


@dataclass
class Assembly:
    """A runtime with the model switch and knowledge upload every served process has."""

    runtime: Runtime
    switch: ModelSwitch
    knowledge: IndexedKnowledge

    def app(self) -> FastAPI:
        from erp_agent.server.app import create_app

        return create_app(self.runtime, self.switch, knowledge=self.knowledge)

    def state(self) -> ServerState:
        """What a queue worker holds: the web app's state, without the app."""
        from erp_agent.server.app import build_state

        return build_state(self.runtime, self.switch, knowledge=self.knowledge)

    async def aclose(self) -> None:
        await self.switch.aclose()
        await self.runtime.aclose()


async def assemble(
    settings: Settings, model: str | None, *, runtime: Runtime | None = None
) -> Assembly:
    """The runtime (built now unless given), the turn's model and the knowledge upload (with the
    deployment's own documents, ERP_AGENT_SITE_DIR/knowledge) for ``settings``."""
    from erp_agent.runtime import Runtime

    built = runtime if runtime is not None else await Runtime.create(settings)
    return Assembly(built, model_switch(built, model), knowledge_admin(built))


def knowledge_admin(runtime: Runtime) -> IndexedKnowledge:
    """The knowledge base as the admin console and the scheduled re-index see it: packaged
    documents, uploads (under the data folder) and the site's own (ERP_AGENT_SITE_DIR)."""
    from erp_agent.server.knowledge import IndexedKnowledge

    settings = runtime.settings
    return IndexedKnowledge(
        runtime.knowledge, Path(settings.data_dir) / "knowledge", settings.site_dir
    )
