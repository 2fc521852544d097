"""Managing subscriptions: preparing one for the user to confirm (every call of its reading
checked now, as the user), storing it, finding one by the words a user names it with ("the
Monday digest"), pausing, resuming and deleting it, and the standing credential its runs use.

The standing credential: runs happen while the user is away, so they cannot use a web
session (it ends at sign-out or after ``ERP_AGENT_SESSION_HOURS``). A user who signed in with
their own ERP API key pair has it kept when they subscribe; otherwise an administrator enables
the user (admin console, ``erp-agent subscriptions enable USER``), which has the ERP issue the
user an API key pair (``Connector.api_credential``, as the user-key channels do). Either is
sealed with ``ERP_AGENT_SESSION_KEY``; every run still asks the ERP, as that user, what they
may read now (docs/security-model.md, "Subscriptions run as the user").
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from erp_agent.calls.session import Session
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ConfigError, NeedsChoice, ToolInputError
from erp_agent.gateway.plans import CHANNELS
from erp_agent.store.records import utcnow
from erp_agent.subscriptions import figures, schedule
from erp_agent.subscriptions.delivery import Mailer
from erp_agent.subscriptions.models import (
    DELIVERY_CHANNELS,
    Call,
    Condition,
    Ref,
    Status,
    Subscription,
)
from erp_agent.subscriptions.store import SubscriptionStore
from erp_agent.tools.base import Args, Change, Effect

if TYPE_CHECKING:
    from erp_agent.catalog import Catalog
    from erp_agent.config import Settings
    from erp_agent.connectors.base import Connector
    from erp_agent.gateway.gateway import Gateway
    from erp_agent.gateway.grants import GrantsCache
    from erp_agent.gateway.policy import RolePolicy
    from erp_agent.store.base import Store
    from erp_agent.tools.base import ToolRegistry

MAX_CALLS = 3
# Tools a reading may not use: they act on results of a turn, or on subscriptions themselves.
_NOT_READINGS = ("subscriptions.", "display.", "results.", "tools.", "documents.")
_STOP = frozenset(
    ["the", "a", "an", "my", "our", "me", "us", "this", "that", "please", "subscription"]
)


class Parts(Protocol):
    """What subscriptions use of the runtime that builds them (``runtime.Runtime``): a
    reading runs through its gateway as the user, signed in with its policy, against its
    catalog and ERP."""

    @property
    def settings(self) -> Settings: ...

    @property
    def catalog(self) -> Catalog: ...

    @property
    def connector(self) -> Connector: ...

    @property
    def store(self) -> Store: ...

    @property
    def gateway(self) -> Gateway: ...

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def policy(self) -> RolePolicy: ...

    @property
    def grants(self) -> GrantsCache | None: ...


class Sealer(Protocol):
    def seal(self, credential: Credential) -> bytes: ...

    def open(self, sealed: bytes) -> Credential | None: ...


class SubscriptionService:
    def __init__(
        self,
        runtime: Parts,
        store: SubscriptionStore,
        sealer: Sealer | None = None,
        *,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self.runtime = runtime
        self.store = store
        # The server's vault (the same key as web sessions and API keys: build_state sets it);
        # until then one made from ERP_AGENT_SESSION_KEY.
        self._sealer = sealer
        self.clock = clock
        self.mailer = Mailer(runtime.settings.smtp)

    @property
    def sealer(self) -> Sealer:
        if self._sealer is None:
            from erp_agent.server.security import Vault

            key = self.runtime.settings.session_key
            self._sealer = Vault(key.get_secret_value() if key else None)
        return self._sealer

    @sealer.setter
    def sealer(self, value: Sealer) -> None:
        self._sealer = value

    @property
    def settings(self) -> Any:
        return self.runtime.settings.subscriptions

    # ------------------------------------------------------------ create

    def default_channels(self) -> list[str]:
        return ["inbox", "email"] if self.mailer.configured else ["inbox"]

    async def prepare(self, session: Session, args: Args) -> Change:
        """Check everything now, as the user; the change the user confirms."""
        calls = self._calls(session, args.get("calls") or [])
        condition = self._condition(args.get("condition"))
        timezone = str(args.get("timezone") or session.timezone or "UTC")
        schedule.zone(timezone)
        cron = self._schedule(args.get("schedule"), condition)
        channels = list(dict.fromkeys(args.get("channels") or self.default_channels()))
        await self._check_channels(session, channels)
        await self._check_limits(session)
        title = " ".join(str(args.get("title") or args.get("question") or "").split())[:120]
        question = " ".join(str(args.get("question") or title).split())[:600]
        if not title:
            raise ToolInputError("a subscription needs a title (or the question it answers)")
        refs = [*self._refs(calls), *[r for r in args.get("refs") or [] if isinstance(r, dict)]]
        payload = {
            "title": title, "question": question, "calls": calls, "refs": refs,
            "schedule": cron, "timezone": timezone, "condition": condition,
            "channels": channels, "conversation_id": args.get("conversation_id"),
        }  # fmt: skip
        when = schedule.in_words(cron, timezone)
        what = f"{figures.condition_text(condition)}, checked " if condition else ""
        summary = (
            f'Subscribe to "{title}": {what}{when[0].lower()}{when[1:]}, delivered to '
            f"{', '.join(channels)}"
        )
        first = schedule.next_run(cron, timezone, self.clock())
        document = {**payload, "schedule_in_words": when, "first_run": first.isoformat()}
        if not await self._has_credential(session):
            document["note"] = self.credential_note(session.user)
        return Change(payload=payload, summary=summary, document=document)

    def _calls(self, session: Session, raw: Any) -> list[Call]:
        if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_CALLS:
            raise ToolInputError(
                f"calls: give 1 to {MAX_CALLS} tool calls that answer the question"
            )
        gateway = self.runtime.gateway
        calls: list[Call] = []
        for i, call in enumerate(raw):
            name = str(call.get("tool") or "") if isinstance(call, dict) else ""
            tool = gateway.registry.get(name)
            if tool is None:
                raise ToolInputError(f"calls/{i}: there is no tool named {name!r}")
            if tool.effect is not Effect.READ or name.startswith(_NOT_READINGS):
                raise ToolInputError(
                    f"calls/{i}: {name} cannot be subscribed to; use the read tool that answers "
                    "the question (e.g. metrics.query)"
                )
            if name not in session.allowed_tools:
                raise ToolInputError(f"calls/{i}: the tool {name} is not available to you")
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            problems = gateway.validate(tool, args)
            if problems:
                raise ToolInputError(f"calls/{i} ({name}): " + "; ".join(problems))
            calls.append({"tool": name, "args": dict(args)})
        return calls

    def _refs(self, calls: list[Call]) -> list[Ref]:
        """The records a reading names: metrics.query filters on dimensions whose values are
        record ids, and the record an ``<entity>.get`` reads. A run first checks they exist."""
        catalog = self.runtime.catalog
        refs: list[Ref] = []
        for call in calls:
            args = call["args"]
            if call["tool"] == "metrics.query":
                for flt in args.get("filters") or []:
                    dim = catalog.dimensions.get(str(flt.get("dimension")))
                    values = flt.get("value")
                    if dim is None or dim.entity is None or flt.get("op", "=") not in ("=", "in"):
                        continue
                    for value in values if isinstance(values, list) else [values]:
                        refs.append({"entity": dim.entity, "id": str(value)})
            elif call["tool"].endswith(".get") and args.get("id"):
                refs.append({"entity": call["tool"].split(".")[0], "id": str(args["id"])})
        return refs

    @staticmethod
    def _condition(raw: Any) -> Condition | None:
        if raw in (None, {}):
            return None
        if not isinstance(raw, dict):
            raise ToolInputError("condition must be an object {op, value[, on]}")
        op = str(raw.get("op") or ">")
        if op not in figures.OPS:
            raise ToolInputError(f"condition/op {op!r}: use one of {', '.join(figures.OPS)}")
        value = raw.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ToolInputError("condition/value must be a number")
        on = str(raw.get("on") or "value")
        if on not in ("value", "rows"):
            raise ToolInputError("condition/on must be 'value' (the figure) or 'rows'")
        return {"on": on, "op": op, "value": float(value)}

    def _schedule(self, raw: Any, condition: Condition | None) -> str:
        if not raw:
            if condition is None:
                raise ToolInputError(
                    "a digest needs a schedule: cron such as '0 8 * * 1' (Mondays at 08:00), "
                    "or words such as 'every Monday at 8'"
                )
            return schedule.validate(self.settings.alert_schedule)
        text = str(raw)
        if len(text.split()) == 5 and not re.search(r"[a-z]{4,}", text, re.I):
            return schedule.validate(text)
        cron = schedule.parse_when(text)
        if cron is None:
            raise ToolInputError(f"schedule {text!r} is neither cron nor a schedule in words")
        return cron

    async def _check_channels(self, session: Session, channels: list[str]) -> None:
        unknown = [c for c in channels if c not in DELIVERY_CHANNELS]
        if unknown or not channels:
            raise ToolInputError(f"channels: choose from {', '.join(DELIVERY_CHANNELS)}")
        plan = await self._plan(session.org)
        if plan is not None:
            for channel in channels:
                if not plan.allows_channel(channel):
                    raise ToolInputError(plan.channel_refusal(channel, session.org))
        if "email" in channels and not self.mailer.configured:
            raise ToolInputError(
                "email cannot be delivered: this server has no mail server configured"
            )

    async def _plan(self, org: str) -> Any:
        plans = self.runtime.gateway.plans
        return await plans.for_org(org) if plans is not None else None

    async def _check_limits(self, session: Session) -> None:
        mine = await self.store.count_active(user=session.user)
        if mine >= self.settings.max_per_user:
            raise ToolInputError(
                f"you have {mine} active subscriptions, the most one user may have; pause or "
                "delete one first"
            )
        plan = await self._plan(session.org)
        if plan is not None and plan.subscriptions is not None:
            used = await self.store.count_active(org=session.org)
            if used >= plan.subscriptions:
                raise ToolInputError(
                    f"the plan {plan.title} of organisation {session.org} allows "
                    f"{plan.subscriptions} active subscription(s), and {used} are active; an "
                    "administrator can change the plan"
                )

    async def create(self, session: Session, payload: Args) -> dict[str, Any]:
        """Store the confirmed subscription (the limits checked again: time has passed)."""
        await self._check_limits(session)
        now = self.clock()
        sub = Subscription(
            id=f"sub_{secrets.token_urlsafe(8)}", user=session.user, org=session.org,
            title=payload["title"], question=payload["question"],
            reading={"calls": payload["calls"], "refs": payload.get("refs") or []},
            schedule=payload["schedule"], timezone=payload["timezone"],
            condition=payload.get("condition"), channels=list(payload["channels"]),
            conversation_id=payload.get("conversation_id"), created_at=now, updated_at=now,
            next_run_at=schedule.next_run(payload["schedule"], payload["timezone"], now),
        )  # fmt: skip
        await self.store.add(sub)
        kept = await self._keep_token(session)
        result: dict[str, Any] = {"subscription": self.view(sub)}
        if not kept and not await self._has_credential(session):
            result["note"] = self.credential_note(session.user)
        return result

    # ------------------------------------------------------------ list, find, pause, delete

    def view(self, sub: Subscription) -> dict[str, Any]:
        return {
            "id": sub.id,
            "title": sub.title,
            "question": sub.question,
            "kind": sub.kind,
            "schedule": schedule.in_words(sub.schedule, sub.timezone),
            "cron": sub.schedule,
            "condition": figures.condition_text(sub.condition) if sub.condition else None,
            "channels": sub.channels,
            "status": str(sub.status),
            "status_message": sub.status_message,
            "next_run": sub.next_run_at.isoformat() if sub.next_run_at and sub.status is Status.ACTIVE else None,
            "last_run": sub.last_run_at.isoformat() if sub.last_run_at else None,
            "last_outcome": str(sub.last_outcome),
            "last_value": (sub.last_value or {}).get("headline"),
            "calls": sub.reading.get("calls", []),
        }  # fmt: skip

    async def listing(self, user: str) -> dict[str, Any]:
        found = await self.store.listing(user=user)
        return {
            "subscriptions": [self.view(s) for s in found],
            "count": len(found),
            "note": "" if found else "You have no subscriptions.",
        }

    async def find(self, user: str, words: str) -> Subscription:
        """The user's subscription named by id or by words ("the Monday digest")."""
        mine = await self.store.listing(user=user)
        exact = [s for s in mine if s.id == words.strip()]
        if exact:
            return exact[0]
        wanted = {w for w in re.findall(r"[a-z0-9]+", words.lower()) if w not in _STOP}
        if not mine:
            raise ToolInputError("you have no subscriptions")

        def score(sub: Subscription) -> int:
            text = " ".join([sub.title, sub.question, sub.kind,
                             schedule.in_words(sub.schedule, sub.timezone), *sub.channels]).lower()  # fmt: skip
            said = set(re.findall(r"[a-z0-9]+", text))
            said |= {w[:-1] for w in said if w.endswith("s")}
            return sum(1 for w in wanted if w in said or w.rstrip("s") in said)

        scored = sorted(((score(s), s) for s in mine), key=lambda p: -p[0])
        best = scored[0][0]
        top = [s for n, s in scored if n == best]
        if not wanted and len(mine) == 1:
            return mine[0]
        if best == 0 or len(top) > 1:
            options = [
                {"label": f"{s.title} ({schedule.in_words(s.schedule, s.timezone)})", "value": s.id}
                for s in (top if best else mine)
            ]
            raise NeedsChoice("Which subscription do you mean?", options)
        return top[0]

    async def set_status(self, user: str, words: str, status: Status) -> dict[str, Any]:
        sub = await self.find(user, words)
        sub.status = status
        sub.updated_at = self.clock()
        if status is Status.ACTIVE:
            sub.status_message, sub.failures = "", 0
            sub.next_run_at = schedule.next_run(sub.schedule, sub.timezone, self.clock())
        else:
            sub.status_message = "Paused by you."
        await self.store.save(sub)
        verb = "Resumed" if status is Status.ACTIVE else "Paused"
        return {"subscription": self.view(sub), "message": f'{verb} "{sub.title}".'}

    async def delete(self, user: str, words: str) -> dict[str, Any]:
        sub = await self.find(user, words)
        await self.store.delete(sub.id)
        return {"deleted": sub.id, "message": f'Deleted "{sub.title}"; nothing more will be sent.'}

    # ------------------------------------------------------------ the standing credential

    def credential_note(self, user: str) -> str:
        return (
            f"It runs while you are away only once {user} has a standing ERP credential: sign "
            "in with your ERP API key, or ask an administrator to enable subscriptions for you "
            "(admin console, Subscriptions). Until then each run says so in your inbox."
        )

    async def _has_credential(self, session: Session) -> bool:
        return (
            session.credential.kind == "token"
            or await self.store.credential(session.user) is not None
        )

    async def _keep_token(self, session: Session) -> bool:
        """Keep an API key pair the user signed in with as their standing credential."""
        if session.credential.kind != "token" or await self.store.credential(session.user):
            return False
        sealed = self.sealer.seal(session.credential).decode()
        await self.store.set_credential(
            session.user, sealed, "the user's own API key sign-in", session.user
        )
        return True

    async def enable_user(self, admin: Credential, admin_user: str, user: str) -> str:
        """Have the ERP issue ``user`` an API key pair (with the administrator's credential) and
        keep it as their standing credential. The ERP ends the user's previous secret, so the
        user's API keys (MCP, the OpenAI-compatible API) are given the new pair too."""
        credential = await self.runtime.connector.api_credential(admin, user)
        if credential is None:
            raise ConfigError(
                "This ERP connector cannot issue API credentials, so subscriptions cannot run "
                "as the user while they are away."
            )
        sealed = self.sealer.seal(credential).decode()
        await self.store.set_credential(
            user, sealed, f"issued by the ERP for {admin_user}", admin_user
        )
        await self.runtime.store.set_api_key_credentials(user, sealed)
        return f"issued by the ERP for {admin_user}"

    async def credentials(self, user: str) -> list[Credential]:
        """The credentials to try for ``user``'s runs: the standing one, then (should the ERP
        have re-issued the pair for an API key since) those behind the user's API keys."""
        found: list[Credential] = []
        kept = await self.store.credential(user)
        if kept is not None and (opened := self.sealer.open(kept[0].encode())) is not None:
            found.append(opened)
        for key in await self.runtime.store.list_api_keys(user=user):
            if key.kind != "user" or key.revoked_at is not None or not key.credential:
                continue
            opened = self.sealer.open(key.credential.encode())
            if opened is not None and opened not in found:
                found.append(opened)
        return found

    async def keep_credential(self, credential: Credential, source: str) -> None:
        sealed = self.sealer.seal(credential).decode()
        await self.store.set_credential(credential.user, sealed, source, credential.user)


def channel_names() -> dict[str, str]:
    return {c: CHANNELS[c] for c in DELIVERY_CHANNELS}
