"""``create_app(runtime, model_provider)``: the HTTP API, the SSE chat stream, the web app."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.routing import Route

from erp_agent import logs
from erp_agent.channels.http import OAUTH_DISCOVERY, mcp_over_http, no_oauth
from erp_agent.channels.keys import KeyRing
from erp_agent.connectors.base import Connector
from erp_agent.coordination.response_cache import CacheScopes, ResponseCache
from erp_agent.coordination.sign_ins import RedisSignInCounts
from erp_agent.coordination.turn_events import TurnEvents
from erp_agent.errors import ConfigError
from erp_agent.queue.submit import TurnQueue
from erp_agent.queue.subscriptions import keep_ticking
from erp_agent.relay.hub import RelayHub
from erp_agent.runtime import Runtime
from erp_agent.server import failures, recovery, retention, settings_store
from erp_agent.server.cached import invalidate_on_writes
from erp_agent.server.input_check import CleanInput
from erp_agent.server.middleware import MetricsMiddleware, SecurityHeaders
from erp_agent.server.model_switch import ModelProvider
from erp_agent.server.prometheus import Metrics
from erp_agent.server.proxy import ProxyHeaders
from erp_agent.server.routes import (
    admin,
    admin_costs,
    admin_plans,
    admin_subscriptions,
    api_keys,
    auth,
    chat,
    conversations,
    documents,
    drill,
    feedback,
    inbox,
    openai,
    ops,
    privacy,
    proposals,
    relay,
    results,
    turns,
)
from erp_agent.server.routes._deps import csrf_guard
from erp_agent.server.security import Vault
from erp_agent.server.state import KnowledgeAdmin, ServerState
from erp_agent.server.throttle import SignInThrottle

STATIC = Path(str(resources.files("erp_agent.server").joinpath("static")))
SHUTDOWN_GRACE_SECONDS = 10.0
log = logging.getLogger(__name__)
NO_KEY_WARNING = (
    "ERP_AGENT_SESSION_KEY is not set: a key was made for this process only, so every web "
    "session ends and any stored model key becomes unreadable at restart. Set it (see "
    "docs/deployment.md); with ERP_AGENT_MODE=production the server refuses to start without it."
)


def configured_key(runtime: Runtime, given: str | None) -> str | None:
    """The configured key(s); unset is refused in production mode and loudly warned about."""
    if given is not None:
        return given
    configured = getattr(runtime.settings, "session_key", None)
    if configured is not None:
        return str(configured.get_secret_value())
    server = getattr(runtime.settings, "server", None)
    if server is not None and server.mode == "production":
        raise ConfigError(
            "ERP_AGENT_MODE=production needs ERP_AGENT_SESSION_KEY (a Fernet key): without "
            "it sessions and stored model keys do not survive a restart. Generate one with "
            '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`.'
        )
    log.warning(NO_KEY_WARNING)
    return None


def require_public_url(runtime: Runtime) -> None:
    """Production mode makes links and the sign-on redirect from ERP_AGENT_PUBLIC_URL only:
    from request headers a client (or a proxy passing its headers on) could choose them."""
    server = getattr(runtime.settings, "server", None)
    if server is not None and server.mode == "production" and not runtime.settings.public_url:
        raise ConfigError(
            "ERP_AGENT_MODE=production needs ERP_AGENT_PUBLIC_URL, the web app's address as "
            "users reach it (e.g. https://agent.example.com/agent): confirm links and the "
            "single sign-on redirect are made from it, never from a request's Host or "
            "X-Forwarded-Host header."
        )


def erp_pinger(connector: Connector) -> Callable[[], Awaitable[None]]:
    """The health check asks the connector: only it knows how its system says it is alive."""

    async def ping() -> None:
        await connector.health()

    return ping


def response_cache(runtime: Runtime) -> ResponseCache | None:
    seconds = runtime.settings.response_cache_seconds
    if not seconds:
        return None
    embedder = runtime.retriever.embedder
    embed = embedder.embed_one if embedder is not None else None
    return ResponseCache(runtime.redis, ttl=seconds, embed=embed)


def build_state(
    runtime: Runtime,
    model_provider: ModelProvider,
    *,
    knowledge: KnowledgeAdmin | None = None,
    session_key: str | None = None,
    erp_ping: Callable[[], Awaitable[None]] | None = None,
) -> ServerState:
    """What a web worker (or a queue worker) holds: the same for every process of a
    deployment, apart from in-process fallbacks."""
    vault = Vault(configured_key(runtime, session_key))
    counts = RedisSignInCounts(runtime.redis, runtime.store) if runtime.redis else runtime.store
    state = ServerState(
        runtime=runtime,
        models=model_provider,
        vault=vault,
        keys=KeyRing(runtime, vault, read_only=lambda: state.read_only),
        relay=RelayHub(runtime, model_provider, read_only=lambda: state.read_only),
        metrics=Metrics(),
        erp_ping=erp_ping or erp_pinger(runtime.connector),
        throttle=SignInThrottle(counts, runtime.settings.sign_in),
        knowledge=knowledge,
        configured_read_only=runtime.settings.read_only,
        read_only=runtime.settings.read_only,
        turn_events=TurnEvents(runtime.redis),
        queue=TurnQueue.from_settings(runtime.settings),
        cache=response_cache(runtime),
    )
    if runtime.subscriptions is not None:  # one vault seals every credential the server keeps
        runtime.subscriptions.sealer = vault
    if state.cache is not None:
        state.cache_scopes = CacheScopes(runtime.connector)
        runtime.async_listeners.append(
            invalidate_on_writes(state.cache, runtime.registry, runtime.catalog)
        )
    return state


def create_app(
    runtime: Runtime,
    model_provider: ModelProvider,
    *,
    knowledge: KnowledgeAdmin | None = None,
    session_key: str | None = None,
    erp_ping: Callable[[], Awaitable[None]] | None = None,
) -> FastAPI:
    """The app for one runtime. ``model_provider(session)`` is asked for the model on every
    turn; pass a ``ModelSwitch`` to let administrators change it while the server runs."""
    state = build_state(
        runtime, model_provider, knowledge=knowledge, session_key=session_key, erp_ping=erp_ping
    )
    require_public_url(runtime)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await settings_store.reseal(state)
        await settings_store.load(state)
        runtime.listeners.append(state.metrics.on_event)  # Prometheus reads the event stream
        turn_log = logs.event_logger(runtime.settings.log)  # and the log, turn by turn
        runtime.listeners.append(turn_log)
        recovering = asyncio.create_task(recovery.keep_recovering(state))
        purging = asyncio.create_task(retention.keep_purging(state))
        ticking = asyncio.create_task(keep_ticking(runtime))  # subscriptions, without a queue
        embedding = _background_embedding(runtime)
        async with mcp_sessions.run():
            yield
        recovering.cancel()
        purging.cancel()
        ticking.cancel()
        runtime.listeners.remove(state.metrics.on_event)
        runtime.listeners.remove(turn_log)
        if embedding is not None:
            embedding.cancel()
        if state.running:  # let turns in flight finish and save their state
            await asyncio.wait(state.running, timeout=SHUTDOWN_GRACE_SECONDS)

    app = FastAPI(
        title="erp-agent",
        summary="An AI agent that works inside your ERP as the signed-in user.",
        version="0.1.0",
        lifespan=lifespan,
        dependencies=[Depends(csrf_guard)],
    )
    app.state.server = state
    app.state.openai_threads = openai.Threads()
    mcp_app, mcp_sessions = mcp_over_http(runtime, state.keys)
    app.router.routes.append(Route("/mcp", endpoint=mcp_app))
    for discovery in OAUTH_DISCOVERY:  # no OAuth for MCP: a plain 401 and these say so
        app.router.routes.append(Route(discovery + "{rest:path}", endpoint=no_oauth))
    app.include_router(openai.router)
    app.include_router(api_keys.router)
    app.include_router(relay.router)

    @app.exception_handler(openai.ApiError)
    async def api_error(_: Request, exc: openai.ApiError) -> JSONResponse:
        return exc.response()

    for module in (
        auth, chat, turns, conversations, documents, proposals, results, drill, feedback, admin,
        ops, privacy,
    ):  # fmt: skip
        app.include_router(module.router)
    for module in (inbox, admin_plans, admin_costs, admin_subscriptions):
        app.include_router(module.router)
    failures.install(app)  # what no route answered: in words, in the client's protocol
    app.add_middleware(CleanInput)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(MetricsMiddleware, metrics=state.metrics)
    server = runtime.settings.server
    # Outermost: every layer below sees the scheme and client the trusted proxy saw.
    app.add_middleware(
        ProxyHeaders, trusted_proxies=server.trusted_proxies, hsts_seconds=server.hsts_seconds,
        forwarded_host=server.forwarded_host, root_path=server.root_path,
    )  # fmt: skip
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/admin", include_in_schema=False)
    async def admin_page() -> FileResponse:
        return FileResponse(STATIC / "admin.html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> RedirectResponse:
        return RedirectResponse("static/favicon.svg")

    return app


def _background_embedding(runtime: Runtime) -> asyncio.Task[None] | None:
    """Cards are synced keyword-only; their vectors are added here while the server runs."""
    retriever = getattr(runtime, "retriever", None)
    if retriever is None or retriever.embedder is None:
        return None
    from erp_agent.retrieval.backfill import Backfill

    tenant = runtime.settings.retrieval.index_tenant
    job = Backfill(retriever.index, retriever.embedder, tenant=tenant,
                   progress=runtime.index_progress)  # fmt: skip
    return asyncio.create_task(job.keep_embedding())
