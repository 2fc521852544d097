"""Sign in as a user and hold a runtime and an engine for the terminal commands."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

from erp_agent.assembly import configure, model_for
from erp_agent.calls.session import Session
from erp_agent.cli._common import fail, password_for
from erp_agent.config import Settings
from erp_agent.engine.turn import Engine
from erp_agent.errors import ErpAgentError
from erp_agent.runtime import Runtime

T = TypeVar("T")


@dataclass
class Agent:
    runtime: Runtime
    session: Session
    engine: Engine


def settings_for(
    erp_url: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    options: Sequence[str] | None = None,
) -> Settings:
    """The configured settings, with the ERP address and the model given on the command line."""
    settings = configure(None, model, base_url, options)
    return settings.model_copy(update={"erp_url": erp_url}) if erp_url else settings


@asynccontextmanager
async def signed_in(
    user: str,
    model: str | None,
    password: str,
    erp_url: str | None = None,
    base_url: str | None = None,
    options: Sequence[str] | None = None,
) -> AsyncIterator[Agent]:
    runtime = await Runtime.create(settings_for(erp_url, model, base_url, options))
    try:
        session = await runtime.sign_in(user, password)
        yield Agent(runtime, session, runtime.engine(model_for(runtime, model)))
    finally:
        await runtime.aclose()


def run_agent(
    user: str,
    model: str | None,
    work: Callable[[Agent], Awaitable[T]],
    erp_url: str | None = None,
    base_url: str | None = None,
    options: Sequence[str] | None = None,
) -> T:
    """Run ``work`` signed in as ``user``; errors become one clear line (see ``fail``)."""
    try:
        # A bad --model (or model setting) fails before the password is asked.
        settings = configure(None, model, base_url, options)
    except ErpAgentError as exc:
        raise fail(exc) from exc
    password = password_for(user, settings)

    async def main() -> T:
        async with signed_in(user, model, password, erp_url, base_url, options) as agent:
            return await work(agent)

    try:
        return asyncio.run(main())
    except ErpAgentError as exc:
        raise fail(exc) from exc
