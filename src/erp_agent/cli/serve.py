"""`erp-agent serve`: the agent's HTTP API and web app against the configured ERP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from erp_agent.cli._common import console, ensure_port_free, fail, load_settings
from erp_agent.cli._model import BaseUrlOption, ModelOption, configure
from erp_agent.config import Settings
from erp_agent.errors import ConfigError, ErpAgentError


def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port of the web app and API.")] = 8080,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            help="Web worker processes on this port; with more than one, share the store "
            "(ERP_AGENT_DATABASE_URL) and Redis (ERP_AGENT_REDIS_URL) between them.",
        ),
    ] = 1,
) -> None:
    """Serve the web app and API for the ERP at ERP_AGENT_ERP_URL (see docs/configuration.md)."""
    try:
        ensure_port_free(host, port, "--port")
        settings = configure(load_settings(), model, base_url)
        from erp_agent import logs

        logs.configure(settings.log)  # JSON or text, at the configured level
        if workers > 1:
            _serve_many(host, port, model, base_url, workers, settings)
        else:
            asyncio.run(_serve(host, port, model, settings))
    except ErpAgentError as exc:
        raise fail(exc) from exc


def _serve_many(
    host: str, port: int, model: str | None, base_url: str | None, workers: int, settings: Settings
) -> None:
    import os

    import uvicorn

    from erp_agent.server.factory import BASE_URL_VARIABLE, MODEL_VARIABLE

    if not settings.session_key:
        raise ConfigError(
            "Several workers need one ERP_AGENT_SESSION_KEY: without it each makes its own, "
            "and a session signed in on one worker is unknown to the others. Generate one "
            'with `python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())"`.'
        )
    if not settings.redis_url:
        console.print(
            "[yellow]Without ERP_AGENT_REDIS_URL each worker keeps its own rate gate and "
            "progress streams.[/]"
        )
    if model:  # each worker process configures the same model from these
        os.environ[MODEL_VARIABLE] = model
    if base_url:
        os.environ[BASE_URL_VARIABLE] = base_url
    console.print(
        f"erp-agent on [bold]http://{host}:{port}/[/] — {workers} workers — ERP {settings.erp_url}"
    )
    uvicorn.run(
        "erp_agent.server.factory:worker_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log.level.lower(),
        log_config=None,  # the workers' logs as configured by ERP_AGENT_LOG_*
        proxy_headers=False,
        root_path=settings.server.root_path.rstrip("/"),
    )


async def _serve(host: str, port: int, model: str | None, settings: Settings) -> None:
    import uvicorn

    from erp_agent.cli._model import model_switch
    from erp_agent.runtime import Runtime
    from erp_agent.server import create_app
    from erp_agent.server.knowledge import IndexedKnowledge

    runtime = await Runtime.create(settings)
    switch = model_switch(runtime, model)
    knowledge = IndexedKnowledge(
        runtime.knowledge, Path(settings.data_dir) / "knowledge", settings.site_dir
    )
    app = create_app(runtime, switch, knowledge=knowledge)
    console.print(
        f"erp-agent on [bold]http://{host}:{port}/[/] — ERP {settings.erp_url} — "
        f"model {switch.describe()['model']}"
    )
    try:
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=settings.log.level.lower(),
            log_config=None,  # our handler and format (ERP_AGENT_LOG_FORMAT), not uvicorn's
            # Forwarded headers are read by the app, from ERP_AGENT_TRUSTED_PROXIES only.
            proxy_headers=False,
            root_path=settings.server.root_path.rstrip("/"),
        )
        await uvicorn.Server(config).serve()
    finally:
        await switch.aclose()
        await runtime.aclose()
