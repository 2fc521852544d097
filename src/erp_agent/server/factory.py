"""The app for ``erp-agent serve --workers N``: uvicorn starts N processes, each importing
this factory; each worker builds its own runtime at start-up (connections cannot cross
processes) and shares everything else through the store and Redis."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from fastapi import FastAPI

Scope = dict[str, Any]


class WorkerApp:
    """An ASGI app whose lifespan builds the real one (``create_app``) in this process."""

    def __init__(self) -> None:
        self.app: FastAPI | None = None
        self._stack = AsyncExitStack()

    async def _start(self) -> None:
        from erp_agent.assembly import assemble, configure, handed_over

        model, base_url = handed_over()  # `serve --model/--base-url`
        assembly = await assemble(configure(None, model, base_url), model)
        self._stack.push_async_callback(assembly.aclose)
        app = assembly.app()
        await self._stack.enter_async_context(app.router.lifespan_context(app))
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()  # startup
            try:
                await self._start()
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            await receive()  # shutdown
            await self._stack.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
        assert self.app is not None, "the app is built at start-up"
        await self.app(scope, receive, send)


def worker_app() -> WorkerApp:
    from erp_agent import logs
    from erp_agent.config import load_settings

    logs.configure(load_settings().log)  # each worker process writes the configured log
    return WorkerApp()
