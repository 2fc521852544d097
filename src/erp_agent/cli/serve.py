"""`erp-agent serve`: the agent's HTTP API and web app against the configured ERP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from erp_agent.cli._common import console, ensure_port_free, fail, load_settings
from erp_agent.cli._model import BaseUrlOption, ModelOption, configure
from erp_agent.config import Settings
from erp_agent.errors import ErpAgentError


def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port of the web app and API.")] = 8080,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Serve the web app and API for the ERP at ERP_AGENT_ERP_URL (see docs/configuration.md)."""
    try:
        ensure_port_free(host, port, "--port")
        settings = configure(load_settings(), model, base_url)
        asyncio.run(_serve(host, port, model, settings))
    except ErpAgentError as exc:
        raise fail(exc) from exc


async def _serve(host: str, port: int, model: str | None, settings: Settings) -> None:
    import uvicorn

    from erp_agent.cli._model import model_switch
    from erp_agent.runtime import Runtime
    from erp_agent.server import create_app
    from erp_agent.server.knowledge import IndexedKnowledge

    runtime = await Runtime.create(settings)
    switch = model_switch(runtime, model)
    knowledge = IndexedKnowledge(runtime.knowledge, Path(settings.data_dir) / "knowledge")
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
            log_level="info",
            # Forwarded headers are read by the app, from ERP_AGENT_TRUSTED_PROXIES only.
            proxy_headers=False,
            root_path=settings.server.root_path.rstrip("/"),
        )
        await uvicorn.Server(config).serve()
    finally:
        await switch.aclose()
        await runtime.aclose()
