"""Assembly: settings → connector, catalog, tools, policy, store, gateway, router, engine.

Channels (CLI, HTTP API, MCP) build one Runtime and share it; nothing here holds per-user state.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog, load_catalog
from erp_agent.config import EngineSettings, Settings, engine_settings, scan_limits
from erp_agent.connectors import registry as connectors
from erp_agent.connectors.base import Capability, Connector, ConnectorProfile
from erp_agent.connectors.profile import catalog_for
from erp_agent.costs.prices import PriceTable
from erp_agent.documents.extract import ScanLimits, Transcriber
from erp_agent.documents.vision import vision_transcriber
from erp_agent.engine.outcomes import OutcomeRecorder
from erp_agent.engine.prompt import site_sections
from erp_agent.engine.routing import Router
from erp_agent.engine.turn import Engine
from erp_agent.events import AsyncListener, InteractionLog, Listener
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.grants import GrantsCache
from erp_agent.gateway.plans import PlanBook
from erp_agent.gateway.policy import RolePolicy, load_policy
from erp_agent.gateway.reconcile import InFlight
from erp_agent.gateway.signin import sign_in
from erp_agent.models.base import ChatModel
from erp_agent.models.registry import ModelRegistry
from erp_agent.planner import FallbackModel, OfflinePlanner
from erp_agent.results.links import LinkBuilder
from erp_agent.results.shaping import ResultShaper
from erp_agent.results.sql import SQLResultStore
from erp_agent.results.store import MemoryResultStore, ResultStore
from erp_agent.retrieval.backfill import Progress
from erp_agent.retrieval.knowledge import KnowledgeBase
from erp_agent.retrieval.retriever import Retriever
from erp_agent.retrieval.settings import make_retriever
from erp_agent.store.base import Store
from erp_agent.store.budgets import Budgets
from erp_agent.store.sql_store import SQLStore, open_store
from erp_agent.subscriptions import tools as subscription_tools
from erp_agent.subscriptions.service import SubscriptionService
from erp_agent.subscriptions.store import SubscriptionStore
from erp_agent.subscriptions.tools import Provider as SubscriptionProvider
from erp_agent.tools.base import Tool, ToolRegistry
from erp_agent.tools.factories import catalog_tools
from erp_agent.tools.modules import analytics, calculator, display
from erp_agent.tools.modules import documents as document_tools
from erp_agent.tools.modules import drill as drill_tools
from erp_agent.tools.modules import knowledge as knowledge_tools
from erp_agent.tools.modules import metrics as metric_tools
from erp_agent.tools.modules import prices as price_tools
from erp_agent.tools.modules import records as record_tools
from erp_agent.tools.modules import results as result_tools
from erp_agent.tools.modules import workflow as workflow_tools
from erp_agent.tools.modules.discovery import search_tool
from erp_agent.tools.modules.documents import VisionSource

if TYPE_CHECKING:  # the Redis client loads only for a deployment that configures Redis
    from erp_agent.coordination.redis_link import RedisLink


def build_registry(
    catalog: Catalog,
    *,
    export_dir: Path | None = None,
    export_days: int = 7,
    retriever: Retriever | None = None,
    knowledge: KnowledgeBase | None = None,
    scan_limits: ScanLimits | None = None,
    vision: VisionSource | None = None,
    profile: ConnectorProfile | None = None,
    subscriptions: SubscriptionProvider | None = None,
) -> ToolRegistry:
    """Catalog-generated tools plus the hand-written modules, registered once at start.

    With a connector ``profile`` (and ``catalog`` already restricted to it by ``catalog_for``),
    modules that need a capability the connector lacks are left out."""

    def can(capability: Capability) -> bool:
        return profile is None or profile.can(capability)

    registry = ToolRegistry(catalog_tools(catalog))
    modules: list[Tool] = [
        *display.tools(catalog),
        *metric_tools.tools(catalog),
        *price_tools.tools(catalog),
        *analytics.tools(catalog),
        *calculator.tools(catalog),
        *result_tools.tools(catalog, export_dir=export_dir, export_days=export_days),
        *drill_tools.tools(catalog),
    ]
    if can(Capability.WORKFLOWS):
        modules.extend(workflow_tools.tools(catalog))
    # A scan drafts a Purchase Invoice or a Sales Order: offered where one of them can be created.
    drafts = [k for k in document_tools.KINDS if k != "auto"]
    if profile is None or any("create" in profile.operations(k) for k in drafts):
        modules.extend(document_tools.tools(scan_limits or ScanLimits(), vision))
    if knowledge is not None:
        modules.extend(knowledge_tools.tools(knowledge, modules=list(catalog.modules)))
    if retriever is not None and can(Capability.DELTA_SYNC):
        modules.extend(record_tools.tools(retriever, catalog))
    if subscriptions is not None:
        modules.extend(subscription_tools.tools(subscriptions))
    registry.extend(modules)
    # Tools are found by meaning with the search index's embedder (offline MiniLM by default).
    registry.add(search_tool(registry, retriever.embedder if retriever is not None else None))
    return registry


def _own_tables(data_dir: Path) -> Callable[[], Awaitable[SQLStore]]:
    """Subscriptions beside a store with no SQL database (the in-memory one): a SQLite file."""

    async def opener() -> SQLStore:
        data_dir.mkdir(parents=True, exist_ok=True)
        own = SQLStore(f"sqlite+aiosqlite:///{data_dir / 'subscriptions.sqlite'}")
        await own.migrate()
        return own

    return opener


def _plan_tokens(plans: PlanBook) -> Callable[[str], Awaitable[int | None]]:
    async def tokens(org: str) -> int | None:
        plan = await plans.for_org(org)
        return plan.monthly_tokens if plan is not None else None

    return tokens


@dataclass
class Runtime:
    settings: Settings
    catalog: Catalog
    connector: Connector
    registry: ToolRegistry
    policy: RolePolicy
    store: Store
    gateway: Gateway
    router: Router
    results: ResultStore
    models: ModelRegistry
    retriever: Retriever
    knowledge: KnowledgeBase
    budgets: Budgets
    # What the record sync and the background embedding are doing (the admin console shows it).
    index_progress: Progress = field(default_factory=Progress)
    redis: RedisLink | None = None  # shared by every worker (ERP_AGENT_REDIS_URL)
    # Subscribers of every turn's events (events/stream.py); channels and the server add theirs.
    listeners: list[Listener] = field(default_factory=list)
    async_listeners: list[AsyncListener] = field(default_factory=list)
    site_prompt: str = ""  # ERP_AGENT_SITE_DIR/prompts, read and checked at start
    # What the ERP granted each user at sign-in, reused by their next one (ERP_AGENT_GRANTS_TTL).
    grants: GrantsCache | None = None
    # Plans per organisation (gateway/plans.py) and subscriptions (erp_agent.subscriptions):
    # both need the SQL store; None on another.
    plans: PlanBook | None = None
    subscriptions: SubscriptionService | None = None

    def __post_init__(self) -> None:
        # One set of subscribers for the turns' events and the gateway's (the audit log among
        # them), whether the gateway is called in a turn or by a confirm from any channel.
        self.async_listeners.extend(
            x for x in self.gateway.async_listeners if x not in self.async_listeners
        )
        self.async_listeners.append(
            InteractionLog(self.store, PriceTable.from_settings(self.settings))
        )
        self.listeners.extend(x for x in self.gateway.listeners if x not in self.listeners)
        self.gateway.listeners = self.listeners
        self.gateway.async_listeners = self.async_listeners

    @classmethod
    async def create(cls, settings: Settings, *, store: Store | None = None) -> Runtime:
        catalog = load_catalog(site=settings.site_dir)  # with the site's overlay, if any
        site_prompt = site_sections(settings.site_dir)  # checked before anything is opened
        connector = connectors.from_settings(settings)
        # Tools, routing and the planner see only what this connector can do.
        catalog = catalog_for(catalog, connector.profile, connector.native_maps())
        retriever = make_retriever(settings)
        knowledge = KnowledgeBase(retriever, settings.retrieval.index_tenant)
        models = ModelRegistry.from_settings(settings)

        def vision(org: str) -> Transcriber | None:
            # Asked per scan: an administrator may configure the vision model at run time.
            if models.settings("vision") is None:
                return None
            return vision_transcriber(models.model("vision", org=org))

        # The subscription tools are registered now and find their service once it is made.
        box: list[SubscriptionService] = []
        registry = build_registry(
            catalog,
            export_dir=Path(settings.data_dir) / "exports",
            export_days=settings.retention.exports_days,
            retriever=retriever,
            knowledge=knowledge,
            scan_limits=scan_limits(settings),
            vision=vision,
            profile=connector.profile,
            subscriptions=lambda: box[0] if box else None,
        )
        if store is None and settings.database_url:
            store = open_store(settings.database_url)
        if store is None:
            path = Path(settings.data_dir) / "erp-agent.sqlite"
            path.parent.mkdir(parents=True, exist_ok=True)
            store = open_store(f"sqlite+aiosqlite:///{path}")
        await store.migrate()
        # One budget: per organisation, counted in the store, asked before every model call.
        budgets = Budgets(store, settings.monthly_token_budget)
        models.count_in(budgets)
        redis: RedisLink | None = None
        if settings.redis_url:
            from erp_agent.coordination.rate_gate import RedisRateGate
            from erp_agent.coordination.redis_link import RedisLink

            redis = RedisLink(settings.redis_url, prefix=settings.redis_prefix)
            if settings.tokens_per_minute:
                # One tokens-per-minute budget for all workers, not one per process.
                models.gate = RedisRateGate(redis, settings.tokens_per_minute)
        results: ResultStore = (
            SQLResultStore(store.engine) if isinstance(store, SQLStore) else MemoryResultStore()
        )
        # A confirm's ERP calls (a read retried, then the write) all end within this.
        confirm_timeout = dt.timedelta(seconds=6 * settings.erp_timeout)
        # A write that got no answer may still reach the ERP for this long (then it is checked).
        in_flight = InFlight(
            dt.timedelta(seconds=settings.erp_timeout),
            dt.timedelta(seconds=settings.erp_proxy_read_timeout),
            dt.timedelta(seconds=settings.erp_write_grace),
        )
        gateway = Gateway(
            registry, store, connector, catalog, results=results, confirm_timeout=confirm_timeout,
            today=settings.engine.today,
            lookup_ttl=dt.timedelta(seconds=settings.master_data_ttl), in_flight=in_flight,
        )  # fmt: skip
        gateway.decision_hooks.append(OutcomeRecorder(store, connector, catalog, registry))
        router = Router(catalog, registry, connector.name)
        engine = store.engine if isinstance(store, SQLStore) else None
        plans = PlanBook(engine, default=settings.default_plan, modules=catalog.modules)
        gateway.plans = plans
        budgets.plan_limit = _plan_tokens(plans)
        runtime = cls(
            settings,
            catalog,
            connector,
            registry,
            load_policy(),
            store,
            gateway,
            router,
            results,
            models,
            retriever,
            knowledge,
            budgets,
            redis=redis,
            site_prompt=site_prompt,
            grants=GrantsCache(
                store,
                settings.erp_url or connector.name,
                dt.timedelta(seconds=settings.grants_ttl),
            ),
            plans=plans,
        )
        tables = SubscriptionStore(engine, opener=_own_tables(Path(settings.data_dir)))
        runtime.subscriptions = SubscriptionService(runtime, tables)
        box.append(runtime.subscriptions)
        return runtime

    async def sign_in(self, user: str, password: str) -> Session:
        return await sign_in(
            self.connector,
            self.registry,
            self.policy,
            user,
            password,
            read_only=self.settings.read_only,
            grants=self.grants,
        )

    def default_model(self, org: str = "default") -> ChatModel:
        """The configured reasoning model (with retries, rate gate and budget), falling back to
        the offline planner when its provider is unavailable; the planner alone when none is
        configured. Take one per turn: the admin console may switch providers at run time."""
        offline = OfflinePlanner(self.catalog, self.connector.name)
        if self.models.settings("reasoning") is None:
            return offline
        return FallbackModel(self.models.model("reasoning", org=org), offline)

    @property
    def links(self) -> LinkBuilder:
        """Document links for every channel (ERP pages, ids in text made links)."""
        return LinkBuilder(self.connector.link, self.catalog, self.connector.name)

    @property
    def shaper(self) -> ResultShaper:
        """Result shaping, the same for the loop, MCP, the OpenAI-compatible API and the relay."""
        return ResultShaper(self.registry, self.results)

    def engine(
        self,
        model: ChatModel,
        settings: EngineSettings | None = None,
        *,
        gateway: Gateway | None = None,
        links: LinkBuilder | None = None,
    ) -> Engine:
        """The one way every channel builds the loop (the relay brings its own door and links:
        its ERP is reached through the plugin), so the site's prompt sections reach them all."""
        if settings is None:
            settings = engine_settings(self.settings)
        return Engine(
            gateway=gateway or self.gateway, model=model, router=self.router,
            catalog=self.catalog, store=self.store, links=links or self.links,
            results=self.results, settings=settings,
            context_providers=[self.knowledge_context],
            listeners=self.listeners, async_listeners=self.async_listeners,
            site_prompt=self.site_prompt,
        )  # fmt: skip

    async def knowledge_context(
        self, query: str, session: Session, budget_tokens: int, given: str = ""
    ) -> str:
        """The knowledge tier: the closest passages, within the budget, with their titles.
        A passage already in ``given`` (an earlier turn's context, still in the history the
        model reads) is named, not sent again."""
        passages = await asyncio.to_thread(self.knowledge.knowledge_context, query, budget_tokens)
        if not passages:
            return ""
        texts = [(p.label, f"[{p.label}] {p.text}") for p in passages]
        fresh = [text for _, text in texts if text not in given]
        earlier = [f"[{label}]" for label, text in texts if text in given]
        out = "Knowledge (cite the title in brackets when you use it):"
        if fresh:
            out += "\n" + "\n\n".join(fresh)
        if earlier:
            out += "\n\nAlso relevant, given earlier in this conversation: " + "; ".join(earlier)
        return out

    async def aclose(self) -> None:
        await self.gateway.aclose()
        if self.subscriptions is not None:
            await self.subscriptions.store.close()
        if self.redis is not None:
            await self.redis.aclose()
        await self.models.aclose()
        await self.connector.aclose()
        # The search index's connections (a PostgreSQL index's pool) go with the process.
        await asyncio.to_thread(self.retriever.index.close)
        await self.store.close()
