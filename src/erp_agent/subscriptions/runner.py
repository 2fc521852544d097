"""Running subscriptions: every due one, as its user, through the gateway; then delivering.

    due? → claim (one worker per run) → the user's standing credential → a session as the ERP
    grants it now (policy ∩ ERP ∩ plan) → the records the reading names still exist? → each
    call through ``Gateway.call`` → alert: condition newly true? → message → channels

What can go wrong, and what the user is told (never a crash loop):

- no standing credential → nothing runs; the subscription and the inbox say how to get one;
- the ERP refuses the credential, or the user may no longer read what it reads → nothing is
  sent, the subscription says so (it stays on, and delivers again once access is back);
- the reading no longer reads (a record it names is gone, the arguments are no longer valid) →
  paused with the reason;
- the ERP down or failing → tried again at the next run; paused after
  ``failures_before_pause`` runs in a row;
- a channel down (SMTP) → the delivery is tried again with backoff, then reported in the inbox.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import secrets
from collections.abc import Sequence
from typing import Any

from erp_agent.calls.outcome import Status as CallStatus
from erp_agent.calls.session import Session
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ErpAgentError, ErpAuthenticationError, ErpRefusal, ErpSessionExpired
from erp_agent.gateway.plans import SUBSCRIPTION_SESSION_PREFIX
from erp_agent.gateway.signin import session_for
from erp_agent.subscriptions import figures, schedule
from erp_agent.subscriptions.delivery import DeliveryFailed, compose, question_link
from erp_agent.subscriptions.models import (
    Call,
    Delivery,
    DeliveryStatus,
    InboxItem,
    Outcome,
    Status,
    Subscription,
)
from erp_agent.subscriptions.service import SubscriptionService
from erp_agent.tools.modules.metrics import readable_by

log = logging.getLogger(__name__)
DELIVERY_LEASE = dt.timedelta(minutes=5)  # a claimed delivery is tried again after this
_GONE = ("DoesNotExistError", "NotFound")


def _gone(refusal: Any) -> bool:
    return refusal.status == 404 or refusal.exc_type in _GONE


class SubscriptionRunner:
    def __init__(self, service: SubscriptionService) -> None:
        self.service = service
        self.runtime = service.runtime
        self.store = service.store

    @property
    def settings(self) -> Any:
        return self.service.settings

    async def tick(self, now: dt.datetime | None = None) -> dict[str, int]:
        """Run every due subscription, then retry every delivery due; what was done."""
        now = now or self.service.clock()
        ran = 0
        for sub in await self.store.due(now):
            if not await self.store.claim(sub, schedule.next_run(sub.schedule, sub.timezone, now)):
                continue  # another worker has it
            ran += 1
            await self.run(sub, now)
        retried = await self.retry(now)
        return {"ran": ran, "retried": retried}

    async def run(self, sub: Subscription, now: dt.datetime) -> Outcome:
        """One run of ``sub`` at ``now``; any failure ends in an outcome, never a raise."""
        try:
            return await self._run(sub, now)
        except Exception as exc:  # a bug or a store hiccup: counted like the ERP failing
            log.exception("subscription %s failed", sub.id)
            return await self._failed(sub, now, exc)

    async def _run(self, sub: Subscription, now: dt.datetime) -> Outcome:
        session = await self._session(sub, now)
        if isinstance(session, Outcome):
            return session
        for ref in sub.reading.get("refs") or []:
            try:
                await self.runtime.connector.get(session.credential, ref["entity"], ref["id"])
            except ErpRefusal as exc:
                what = self._record(ref["entity"], ref["id"])
                if _gone(exc.refusal):
                    return await self._pause(sub, now, Outcome.UNREADABLE, (
                        f"{what}, which this subscription reads, no longer exists in the ERP "
                        f"(it said: “{exc.refusal.message}”), so the question no longer reads. "
                        "Paused: ask the question again and subscribe to the new answer."
                    ))  # fmt: skip
                return await self._no_access(sub, now, (
                    f"You can no longer read {what} (the ERP said: “{exc.refusal.message}”); "
                    "nothing was sent."
                ))  # fmt: skip
        results: list[tuple[str, Any]] = []
        for call in sub.reading.get("calls") or []:
            refused = self._unreadable(session, call)
            if refused is not None:
                return await self._no_access(sub, now, refused)
            outcome = await self.runtime.gateway.call(session, call["tool"], call["args"])
            if outcome.status is CallStatus.OK:
                results.append((call["tool"], outcome.data))
            elif outcome.status is CallStatus.REFUSED:
                return await self._no_access(sub, now, f"{outcome.message} Nothing was sent.")
            elif outcome.status is CallStatus.ERP_REFUSED:
                refusal = outcome.refusal
                said = (refusal["message"] if refusal else "") or outcome.message
                if refusal and (
                    refusal["status"] == 403 or refusal["exc_type"] == "PermissionError"
                ):
                    return await self._no_access(
                        sub,
                        now,
                        f"You can no longer read this: the ERP said “{said}”. Nothing was sent.",
                    )
                return await self._pause(sub, now, Outcome.UNREADABLE, (
                    f"The ERP no longer answers this question: “{said}”. Paused: ask the "
                    "question again and subscribe to the new answer."
                ))  # fmt: skip
            elif outcome.status is CallStatus.INVALID:
                why = "; ".join(outcome.errors) or outcome.message
                return await self._pause(sub, now, Outcome.UNREADABLE, (
                    f"The question no longer reads ({why}). Paused: ask the question again and "
                    "subscribe to the new answer."
                ))  # fmt: skip
            else:
                return await self._failed(sub, now, ErpAgentError(outcome.message))
        return await self._conclude(sub, session, results, now)

    async def _session(self, sub: Subscription, now: dt.datetime) -> Session | Outcome:
        """The user's session as the ERP and the plan grant it now, or the outcome saying why
        there is none."""
        credentials = await self.service.credentials(sub.user)
        if not credentials:
            return await self._note(
                sub, now, Outcome.NO_CREDENTIAL, self.service.credential_note(sub.user)
            )
        refused: Exception | None = None
        for i, credential in enumerate(credentials):
            try:
                session = await self._as(sub, credential)
            except (ErpAuthenticationError, ErpSessionExpired) as exc:
                refused = exc
                continue
            if i:  # the pair behind the user's API key works: it is the standing one now
                await self.service.keep_credential(credential, "the pair of the user's API key")
            return session
        return await self._no_access(sub, now, (
            f"The ERP no longer accepts {sub.user}'s credential ({refused}); the user may have "
            "been disabled, or their API keys regenerated. Nothing was sent; an administrator "
            "can enable subscriptions for the user again."
        ))  # fmt: skip

    async def _as(self, sub: Subscription, credential: Credential) -> Session:
        rt = self.runtime
        session = await session_for(
            rt.connector, rt.registry, rt.policy, credential, org=sub.org, read_only=True,
            grants=rt.grants,
        )  # fmt: skip
        return dataclasses.replace(
            session, id=f"{SUBSCRIPTION_SESSION_PREFIX}{sub.id}", timezone=sub.timezone
        )

    def _unreadable(self, session: Session, call: Call) -> str | None:
        """Why the user may no longer read what ``call`` reads (None: they may), told apart
        from a question that no longer reads: the tool, or a metric's records, not granted."""
        catalog = self.runtime.catalog
        if call["tool"] == "metrics.query":
            metric = catalog.metrics.get(str(call["args"].get("metric")))
            if metric is not None and not readable_by(session.allowed_tools, metric, catalog):
                what = catalog.entity(metric.entity).plural
                return (
                    f"You can no longer read {what} (your ERP permissions, or your "
                    f"organisation's plan, changed), so {metric.label} is not available to "
                    "you; nothing was sent."
                )
        return None

    def _record(self, entity: str, record_id: str) -> str:
        try:
            label = self.runtime.catalog.entity(entity).label
        except Exception:
            label = entity
        return f"the {label} {record_id!r}"

    # ------------------------------------------------------------ outcomes

    async def _conclude(
        self,
        sub: Subscription,
        session: Session,
        results: Sequence[tuple[str, Any]],
        now: dt.datetime,
    ) -> Outcome:
        _tool, data = results[0]
        found = figures.figures(data)
        headline = f"{figures.label(data, sub.title)}: {figures.figure_text(found)}"
        value = {"headline": headline, "figures": found, "rows": figures.rows_listed(data)}
        sub.last_run_at, sub.last_value, sub.failures, sub.status_message = now, value, 0, ""
        reason = ""
        if sub.condition:
            met = figures.holds(sub.condition, data)
            newly = met and not sub.condition_met
            sub.condition_met = met
            if not newly:
                sub.last_outcome = Outcome.QUIET
                await self._save(sub, now)
                return Outcome.QUIET
            reason = f"Alert: {figures.condition_text(sub.condition)} — it does now."
        details = [
            f"{figures.label(d, t)}: {figures.figure_text(figures.figures(d))}"
            for t, d in results[1:]
        ]
        local = now.astimezone(schedule.zone(sub.timezone))
        message = compose(
            title=sub.title, question=sub.question, headline=figures.figure_text(found),
            definition=figures.definition(data), reason=reason, details=details, when=local,
            link=question_link(self.runtime.settings.public_url, sub.question),
        )  # fmt: skip
        message["figures"] = found
        await self._deliver(sub, session, message, now)
        sub.last_outcome = Outcome.DELIVERED
        await self._save(sub, now)
        return Outcome.DELIVERED

    async def _save(self, sub: Subscription, now: dt.datetime) -> None:
        sub.updated_at = now
        await self.store.save(sub)

    async def _note(
        self, sub: Subscription, now: dt.datetime, outcome: Outcome, message: str
    ) -> Outcome:
        """Nothing delivered; the subscription (still on) says why, and the inbox once."""
        changed = sub.last_outcome is not outcome or sub.status_message != message
        sub.last_outcome, sub.status_message, sub.last_run_at = outcome, message, now
        await self._save(sub, now)
        if changed:
            await self._notice(sub, now, f"{sub.title}: not delivered", message)
        return outcome

    async def _no_access(self, sub: Subscription, now: dt.datetime, message: str) -> Outcome:
        sub.condition_met = False  # delivered afresh once access is back and the condition holds
        return await self._note(sub, now, Outcome.NO_ACCESS, message)

    async def _pause(
        self, sub: Subscription, now: dt.datetime, outcome: Outcome, message: str
    ) -> Outcome:
        sub.status, sub.status_message, sub.last_outcome, sub.last_run_at = (
            Status.PAUSED, message, outcome, now,
        )  # fmt: skip
        await self._save(sub, now)
        await self._notice(sub, now, f"{sub.title}: paused", message)
        return outcome

    async def _failed(self, sub: Subscription, now: dt.datetime, exc: Exception) -> Outcome:
        sub.failures += 1
        if sub.failures >= self.settings.failures_before_pause:
            return await self._pause(sub, now, Outcome.ERROR, (
                f"The last {sub.failures} runs failed (the last: {exc}). Paused; resume it "
                "once the ERP answers again."
            ))  # fmt: skip
        sub.last_outcome, sub.last_run_at = Outcome.ERROR, now
        sub.status_message = f"The last run failed ({exc}); it is tried again at the next run."
        await self._save(sub, now)
        return Outcome.ERROR

    async def _notice(self, sub: Subscription, now: dt.datetime, title: str, body: str) -> None:
        await self.store.add_item(InboxItem(
            id=f"inb_{secrets.token_urlsafe(8)}", user=sub.user, title=title, body=body,
            kind="notice", subscription_id=sub.id, created_at=now,
            data={"status": str(sub.status), "outcome": str(sub.last_outcome)},
        ))  # fmt: skip

    # ------------------------------------------------------------ delivery

    async def _deliver(
        self, sub: Subscription, session: Session, message: dict[str, Any], now: dt.datetime
    ) -> None:
        plan = await self.service._plan(sub.org)
        for channel in sub.channels:
            if plan is not None and not plan.allows_channel(channel):
                await self._notice(sub, now, f"{sub.title}: not delivered by {channel}",
                                   plan.channel_refusal(channel, sub.org))  # fmt: skip
                continue
            if channel == "inbox":
                await self.store.add_item(InboxItem(
                    id=f"inb_{secrets.token_urlsafe(8)}", user=sub.user, title=sub.title,
                    body=str(message["text"]), subscription_id=sub.id, created_at=now,
                    data={k: message[k] for k in ("headline", "definition", "link", "question", "figures")},
                ))  # fmt: skip
                continue
            delivery = Delivery(
                id=f"dlv_{secrets.token_urlsafe(8)}", subscription_id=sub.id, user=sub.user,
                channel=channel, message=message, created_at=now, next_attempt_at=now,
            )  # fmt: skip
            await self.store.add_delivery(delivery)
            await self._attempt(delivery, now, session.credential)

    async def retry(self, now: dt.datetime) -> int:
        """Try again every delivery whose backoff has passed."""
        tried = 0
        for delivery in await self.store.due_deliveries(now):
            if await self.store.claim_delivery(delivery, now + DELIVERY_LEASE):
                tried += 1
                await self._attempt(delivery, now, None)
        return tried

    async def _attempt(
        self, delivery: Delivery, now: dt.datetime, credential: Credential | None
    ) -> None:
        delivery.attempts += 1
        final = False
        try:
            delivery.reference = await self._send(delivery, credential)
            delivery.status, delivery.sent_at, delivery.last_error = DeliveryStatus.SENT, now, None
        except ErpRefusal as exc:  # the ERP said no: trying again would get the same answer
            delivery.last_error, final = f"The ERP refused: {exc.refusal.message}", True
        except DeliveryFailed as exc:
            delivery.last_error, final = str(exc), exc.final
        except ErpAgentError as exc:  # the ERP or the mail server down: tried again later
            delivery.last_error = str(exc)
        if delivery.status is not DeliveryStatus.SENT:
            if final or delivery.attempts >= self.settings.delivery_attempts:
                delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
                await self._gave_up(delivery, now)
            else:
                wait = self.settings.retry_seconds * 4 ** (delivery.attempts - 1)
                delivery.next_attempt_at = now + dt.timedelta(seconds=wait)
        await self.store.save_delivery(delivery)

    async def _send(self, delivery: Delivery, credential: Credential | None) -> str | None:
        message = delivery.message
        if delivery.channel == "email":
            if "@" not in delivery.user:
                raise DeliveryFailed(f"{delivery.user} is not an email address.", final=True)
            return await self.service.mailer.send(delivery.user, message)
        if credential is None:
            found = await self.service.credentials(delivery.user)
            if not found:
                raise DeliveryFailed(self.service.credential_note(delivery.user))
            credential = found[0]
        reference = await self.runtime.connector.notify(
            credential, str(message["subject"]), str(message["text"]), str(message["link"])
        )
        if reference is None:
            raise DeliveryFailed(
                "This ERP keeps no notifications the agent can create.", final=True
            )
        return reference

    async def _gave_up(self, delivery: Delivery, now: dt.datetime) -> None:
        how = "by email" if delivery.channel == "email" else "as an ERP notification (ToDo)"
        await self.store.add_item(InboxItem(
            id=f"inb_{secrets.token_urlsafe(8)}", user=delivery.user,
            title=f"{delivery.message.get('subject', 'A subscription')}: not delivered {how}",
            body=(f"It could not be delivered {how} after {delivery.attempts} "
                  f"attempt(s): {delivery.last_error} Here it is instead.\n\n{delivery.message.get('text', '')}"),
            kind="notice", subscription_id=delivery.subscription_id, created_at=now,
            data={k: delivery.message.get(k) for k in ("headline", "definition", "link", "question")},
        ))  # fmt: skip
