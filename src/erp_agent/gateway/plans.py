"""Plans per organisation: which modules, tools, channels, monthly tokens and subscriptions an
organisation may use. Stored in the store (``plans``, ``org_plans``), edited in the admin
console, shown by ``erp-agent doctor``.

A plan only narrows: the gateway applies it after the ERP's permissions and the role policy.
A tool outside the plan is not offered (``Gateway.within_plan`` narrows the session's tools
before routing; every channel's tool list reads them) and is refused if called anyway, with a
message naming the plan (``Gateway.call``, ``Gateway.confirm``). Hosted (relay) tenants and a
single-company install (organisation ``default``) are planned alike. An organisation with no
plan of its own has ``ERP_AGENT_DEFAULT_PLAN``; with none of either it is not limited.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from erp_agent.calls.session import CHANNEL_SESSION_PREFIX, RELAY_SESSION_PREFIX, Session
from erp_agent.errors import ConfigError
from erp_agent.store.tables import org_plans, plans
from erp_agent.store.upsert import upsert
from erp_agent.tools.base import Tool

# Where a plan's channels are used: asking (web, api, relay) and receiving subscriptions.
CHANNELS: dict[str, str] = {
    "web": "the web app and the command line",
    "api": "MCP and the OpenAI-compatible API",
    "relay": "the ERP plugin (hosted relay)",
    "email": "subscriptions by email",
    "erp": "subscriptions as ERP notifications",
    "inbox": "subscriptions in the web app's inbox",
}
# Sessions of a subscription's run (subscriptions/runner.py): it delivers to the channels the
# subscription names, each of which the plan must include.
SUBSCRIPTION_SESSION_PREFIX = "sub_"
DELIVERY = frozenset({"email", "erp", "inbox"})
REFRESH_SECONDS = 2.0  # every worker re-reads the plans this often (an admin's edit applies)
_KEYS = {"label", "modules", "tools", "channels", "monthly_tokens", "subscriptions"}


def channel_of(session: Session) -> str:
    """The channel a session asks through, from how it was opened."""
    if session.id.startswith(CHANNEL_SESSION_PREFIX):
        return "api"
    if session.id.startswith(RELAY_SESSION_PREFIX):
        return "relay"
    if session.id.startswith(SUBSCRIPTION_SESSION_PREFIX):
        return "subscription"
    return "web"


def _names(raw: Any, what: str, problems: list[str]) -> frozenset[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list | tuple) or not all(isinstance(x, str) and x for x in raw):
        problems.append(f"'{what}' must be a list of names (or left out: everything)")
        return None
    return frozenset(raw)


def _count(raw: Any, what: str, problems: list[str]) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        problems.append(f"'{what}' must be a whole number of 0 or more (or left out: no limit)")
        return None
    return raw


@dataclass(frozen=True)
class Plan:
    """What an organisation may use; ``None`` in a field means no limit there."""

    name: str
    label: str = ""
    modules: frozenset[str] | None = None  # catalog modules (selling, stock, hr, …)
    tools: tuple[str, ...] | None = None  # globs over tool names, for every tool
    channels: frozenset[str] | None = None  # keys of CHANNELS
    monthly_tokens: int | None = None
    subscriptions: int | None = None  # active subscriptions per organisation

    @classmethod
    def parse(cls, name: str, raw: Mapping[str, Any], modules: Iterable[str] = ()) -> Plan:
        """A plan from its JSON definition; ConfigError listing every problem."""
        problems: list[str] = []
        if not name or not name.strip():
            problems.append("a plan needs a name")
        unknown = sorted(set(raw) - _KEYS)
        if unknown:
            problems.append(
                f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}"
            )
        chosen = _names(raw.get("modules"), "modules", problems)
        known = set(modules)
        if chosen is not None and known and chosen - known:
            problems.append(
                f"no module named {', '.join(sorted(chosen - known))}; the modules are "
                f"{', '.join(sorted(known))}"
            )
        tools = _names(raw.get("tools"), "tools", problems)
        channels = _names(raw.get("channels"), "channels", problems)
        if channels is not None and channels - set(CHANNELS):
            problems.append(
                f"no channel named {', '.join(sorted(channels - set(CHANNELS)))}; the channels "
                f"are {', '.join(CHANNELS)}"
            )
        plan = cls(
            name=name.strip(),
            label=str(raw.get("label") or ""),
            modules=chosen,
            tools=tuple(sorted(tools)) if tools is not None else None,
            channels=channels,
            monthly_tokens=_count(raw.get("monthly_tokens"), "monthly_tokens", problems),
            subscriptions=_count(raw.get("subscriptions"), "subscriptions", problems),
        )
        if problems:
            raise ConfigError(f"Plan {name!r}: " + "; ".join(problems) + ".")
        return plan

    def definition(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "modules": sorted(self.modules) if self.modules is not None else None,
            "tools": list(self.tools) if self.tools is not None else None,
            "channels": sorted(self.channels) if self.channels is not None else None,
            "monthly_tokens": self.monthly_tokens,
            "subscriptions": self.subscriptions,
        }

    def describe(self) -> str:
        """The plan in one line (doctor, messages)."""
        parts = [
            "modules " + (", ".join(sorted(self.modules)) if self.modules is not None else "all"),
            "tools " + (", ".join(self.tools) if self.tools is not None else "all"),
            "channels "
            + (", ".join(sorted(self.channels)) if self.channels is not None else "all"),
            "tokens/month "
            + (f"{self.monthly_tokens:,}" if self.monthly_tokens is not None else "no limit"),
            "subscriptions "
            + (str(self.subscriptions) if self.subscriptions is not None else "no limit"),
        ]
        return "; ".join(parts)

    def permits(self, tool: Tool, catalog_modules: Iterable[str]) -> bool:
        """Whether the plan lets ``tool`` be used. ``modules`` limit the tools of the catalog's
        modules (entity, report and workflow tools); the spine (metrics, display, tool search,
        …) reads only through those, so a metric over a module left out is not readable either."""
        if self._outside(tool, catalog_modules):
            return False
        if tool.module == "subscriptions" and self.subscriptions == 0:
            return False
        if self.tools is not None:
            return any(fnmatch.fnmatchcase(tool.name, p) for p in self.tools)
        return True

    def _outside(self, tool: Tool, catalog_modules: Iterable[str]) -> bool:
        """The tool is of a catalog module the plan leaves out."""
        modules = set(catalog_modules)
        return (
            self.modules is not None and tool.module in modules and tool.module not in self.modules
        )

    def allows_channel(self, channel: str) -> bool:
        if self.channels is None:
            return True
        if channel == "subscription":  # a run, whose deliveries are checked one by one
            return bool(self.channels & DELIVERY)
        return channel in self.channels

    def refusal(self, tool: Tool, org: str, catalog_modules: Iterable[str]) -> str:
        if self._outside(tool, catalog_modules):
            return (
                f"The tool {tool.name} belongs to the {tool.module} module, which the plan "
                f"{self.title} of organisation {org} does not include (it includes: "
                f"{', '.join(sorted(self.modules or ())) or 'no module'}). An administrator can "
                "change the plan in the admin console."
            )
        return (
            f"The tool {tool.name} is not part of the plan {self.title} of organisation {org}. "
            "An administrator can change the plan in the admin console."
        )

    def channel_refusal(self, channel: str, org: str) -> str:
        return (
            f"The plan {self.title} of organisation {org} does not include "
            f"{CHANNELS.get(channel, channel)} (channel {channel!r}). An administrator can "
            "change the plan in the admin console."
        )

    @property
    def title(self) -> str:
        return f"'{self.label or self.name}'"


class PlanBook:
    """The plans and which organisation is on which, read from the store and kept for
    ``REFRESH_SECONDS`` (so every worker applies an administrator's edit within that time).
    Without a SQL store there are no plans (nothing is limited)."""

    def __init__(
        self,
        engine: AsyncEngine | None,
        *,
        default: str | None = None,
        modules: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine = engine
        self.default = default
        self.modules = frozenset(modules)
        self._clock = clock
        self._read_at = float("-inf")
        self._plans: dict[str, Plan] = {}
        self._orgs: dict[str, str] = {}
        self._narrowed: dict[tuple[str, frozenset[str]], frozenset[str]] = {}

    def invalidate(self) -> None:
        self._read_at = float("-inf")

    async def _refresh(self) -> None:
        if self.engine is None or self._clock() - self._read_at < REFRESH_SECONDS:
            return
        async with self.engine.connect() as connection:
            found = (await connection.execute(select(plans))).mappings().all()
            assigned = (await connection.execute(select(org_plans))).mappings().all()
        parsed = {}
        for row in found:
            try:
                parsed[row["name"]] = Plan.parse(
                    row["name"], {**row["definition"], "label": row["label"]}
                )
            except ConfigError:
                continue  # saved through the API, so valid; an edited row is skipped
        self._plans = parsed
        self._orgs = {str(r["org"]): str(r["plan"]) for r in assigned}
        self._narrowed.clear()
        self._read_at = self._clock()

    async def plans(self) -> dict[str, Plan]:
        await self._refresh()
        return dict(self._plans)

    async def assignments(self) -> dict[str, str]:
        await self._refresh()
        return dict(self._orgs)

    async def for_org(self, org: str) -> Plan | None:
        """The organisation's plan: its own, else the default; None when not limited."""
        await self._refresh()
        name = self._orgs.get(org, self.default)
        return self._plans.get(name) if name else None

    def narrow(self, plan: Plan, session: Session, tools: Callable[[str], Tool | None]) -> Session:
        """``session`` with only the tools the plan permits (none on a channel it leaves out)."""
        if not plan.allows_channel(channel_of(session)):
            return dataclasses.replace(session, allowed_tools=frozenset())
        key = (plan.name, session.allowed_tools)
        allowed = self._narrowed.get(key)
        if allowed is None:
            allowed = frozenset(
                n for n in session.allowed_tools
                if (t := tools(n)) is None or plan.permits(t, self.modules)
            )  # fmt: skip
            if len(self._narrowed) > 256:
                self._narrowed.clear()
            self._narrowed[key] = allowed
        if allowed == session.allowed_tools:
            return session
        return dataclasses.replace(session, allowed_tools=allowed)

    # ------------------------------------------------------------ editing (the admin console)

    def _need_engine(self) -> AsyncEngine:
        if self.engine is None:
            raise ConfigError("Plans need the agent's SQL store (ERP_AGENT_DATABASE_URL or the default SQLite file).")  # fmt: skip
        return self.engine

    async def save(self, plan: Plan) -> None:
        engine = self._need_engine()
        definition = plan.definition()
        label = definition.pop("label")
        row = {"name": plan.name, "label": label, "definition": definition,
               "updated_at": dt.datetime.now(dt.UTC)}  # fmt: skip
        async with engine.begin() as connection:
            await connection.execute(upsert(engine.dialect.name, plans, row, ["name"]))
        self.invalidate()

    async def remove(self, name: str) -> bool:
        """Delete a plan no organisation is on; False when there is none such."""
        engine = self._need_engine()
        async with engine.begin() as connection:
            used = (
                await connection.execute(select(org_plans.c.org).where(org_plans.c.plan == name))
            ).first()
            if used is not None:
                raise ConfigError(
                    f"The plan {name!r} is the plan of organisation {used[0]}; give it another "
                    "plan first."
                )
            gone = await connection.execute(delete(plans).where(plans.c.name == name))
        self.invalidate()
        return bool(gone.rowcount)

    async def assign(self, org: str, plan: str | None) -> None:
        """Put ``org`` on ``plan`` (None: back to the default plan)."""
        engine = self._need_engine()
        async with engine.begin() as connection:
            if plan is None:
                await connection.execute(delete(org_plans).where(org_plans.c.org == org))
            else:
                exists = (
                    await connection.execute(select(plans.c.name).where(plans.c.name == plan))
                ).first()
                if exists is None:
                    raise ConfigError(f"There is no plan named {plan!r}.")
                row = {"org": org, "plan": plan, "updated_at": dt.datetime.now(dt.UTC)}
                await connection.execute(upsert(engine.dialect.name, org_plans, row, ["org"]))
        self.invalidate()
