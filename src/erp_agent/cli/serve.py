"""`erp-agent serve`: the agent's HTTP API and web app against the configured ERP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from erp_agent.assembly import configure, model_options
from erp_agent.cli._common import console, ensure_port_free, fail
from erp_agent.cli._model import BaseUrlOption, ModelOption, ModelSettingOption
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
    model_setting: ModelSettingOption = None,
) -> None:
    """Serve the web app and API for the ERP at ERP_AGENT_ERP_URL (see docs/configuration.md)."""
    try:
        ensure_port_free(host, port, "--port")
        settings = configure(None, model, base_url, model_setting)
        from erp_agent import logs

        logs.configure(settings.log)  # JSON or text, at the configured level
        if workers > 1:
            _serve_many(host, port, model, base_url, workers, settings, model_setting)
        else:
            asyncio.run(_serve(host, port, model, settings))
    except ErpAgentError as exc:
        raise fail(exc) from exc


def _serve_many(
    host: str,
    port: int,
    model: str | None,
    base_url: str | None,
    workers: int,
    settings: Settings,
    options: list[str] | None = None,
) -> None:
    import os

    import uvicorn

    from erp_agent.assembly import hand_over

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
    from erp_agent.server.prometheus import SHARED_VARIABLE, share_between_workers

    if not os.environ.get(SHARED_VARIABLE):  # /metrics adds up every worker's counts
        share_between_workers(Path(settings.data_dir) / "metrics")
    hand_over(model, base_url)  # each worker process configures the same model
    for name, value in model_options(options).items():  # beside the model, in every worker
        os.environ[f"ERP_AGENT_REASONING_MODEL__{name.upper()}"] = value
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
        proxy_headers=False,  # the app reads them, and its root path (ProxyHeaders)
    )


async def _serve(host: str, port: int, model: str | None, settings: Settings) -> None:
    import uvicorn

    from erp_agent.assembly import assemble

    assembly = await assemble(settings, model)
    app = assembly.app()
    console.print(
        f"erp-agent on [bold]http://{host}:{port}/[/] — ERP {settings.erp_url} — "
        f"model {assembly.switch.describe()['model']}"
    )
    try:
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=settings.log.level.lower(),
            log_config=None,  # our handler and format (ERP_AGENT_LOG_FORMAT), not uvicorn's
            # Forwarded headers are read by the app, from ERP_AGENT_TRUSTED_PROXIES only.
            # and the root path (ERP_AGENT_ROOT_PATH or a trusted X-Forwarded-Prefix) too.
            proxy_headers=False,
        )
        await uvicorn.Server(config).serve()
    finally:
        await assembly.aclose()
