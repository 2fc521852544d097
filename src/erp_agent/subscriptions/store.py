"""The subscription tables on the store's SQL database (SQLAlchemy Core, the store's engine):
subscriptions, the standing credential each user's runs use, deliveries and the inbox.

Claims are conditional updates, so two workers that find the same subscription due run it
once: the one whose update moved ``next_run_at`` on runs it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from erp_agent.errors import StoreError
from erp_agent.store.sql_store import SQLStore
from erp_agent.store.tables import deliveries, inbox, standing_credentials, subscriptions
from erp_agent.store.upsert import upsert
from erp_agent.subscriptions.models import (
    Delivery,
    DeliveryStatus,
    InboxItem,
    Outcome,
    Status,
    Subscription,
)


def _subscription(row: RowMapping) -> Subscription:
    values = {c.name: row[c.name] for c in subscriptions.columns}
    values["status"] = Status(values["status"])
    values["last_outcome"] = Outcome(values["last_outcome"])
    return Subscription(**values)


def _delivery(row: RowMapping) -> Delivery:
    values = {c.name: row[c.name] for c in deliveries.columns}
    values["status"] = DeliveryStatus(values["status"])
    return Delivery(**values)


def _inbox(row: RowMapping) -> InboxItem:
    return InboxItem(**{c.name: row[c.name] for c in inbox.columns})


def _values(item: Any) -> dict[str, Any]:
    values = dataclasses.asdict(item)
    for key, value in values.items():
        if hasattr(value, "value") and isinstance(value, str):
            values[key] = str(value)  # StrEnums as plain text
    return values


class SubscriptionStore:
    """On the store's own database; beside a store that has none (the in-memory one of tests
    and throwaway sessions), on a SQLite file of its own, opened at first use (``opener``)."""

    def __init__(
        self,
        engine: AsyncEngine | None = None,
        *,
        opener: Callable[[], Awaitable[SQLStore]] | None = None,
    ) -> None:
        self._engine = engine
        self._opener = opener
        self._own: SQLStore | None = None
        self._opening = asyncio.Lock()

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            raise StoreError("The subscription tables are not open yet.")
        return self._engine

    async def _ready(self) -> AsyncEngine:
        if self._engine is None:
            async with self._opening:
                if self._engine is None:
                    if self._opener is None:
                        raise StoreError("Subscriptions need a SQL database.")
                    self._own = await self._opener()
                    self._engine = self._own.engine
        return self._engine

    async def close(self) -> None:
        if self._own is not None:
            await self._own.close()

    @asynccontextmanager
    async def _tx(self, action: str) -> AsyncIterator[AsyncConnection]:
        engine = await self._ready()
        try:
            async with engine.begin() as connection:
                yield connection
        except sa_exc.SQLAlchemyError as error:
            raise StoreError(f"Could not {action}: {error}") from error

    # ------------------------------------------------------------ subscriptions

    async def add(self, sub: Subscription) -> None:
        async with self._tx(f"save subscription {sub.id}") as c:
            await c.execute(insert(subscriptions).values(_values(sub)))

    async def save(self, sub: Subscription) -> None:
        values = _values(sub)
        async with self._tx(f"save subscription {sub.id}") as c:
            await c.execute(
                update(subscriptions).where(subscriptions.c.id == sub.id).values(values)
            )

    async def get(self, sub_id: str) -> Subscription | None:
        async with self._tx(f"read subscription {sub_id}") as c:
            row = (
                (await c.execute(select(subscriptions).where(subscriptions.c.id == sub_id)))
                .mappings()
                .first()
            )
        return None if row is None else _subscription(row)

    async def listing(
        self, *, user: str | None = None, org: str | None = None, status: Status | None = None
    ) -> list[Subscription]:
        """Oldest first."""
        query = select(subscriptions).order_by(subscriptions.c.created_at, subscriptions.c.id)
        if user is not None:
            query = query.where(subscriptions.c.user == user)
        if org is not None:
            query = query.where(subscriptions.c.org == org)
        if status is not None:
            query = query.where(subscriptions.c.status == status.value)
        async with self._tx("list subscriptions") as c:
            return [_subscription(r) for r in (await c.execute(query)).mappings()]

    async def count_active(self, *, user: str | None = None, org: str | None = None) -> int:
        query = select(func.count()).where(subscriptions.c.status == Status.ACTIVE.value)
        if user is not None:
            query = query.where(subscriptions.c.user == user)
        if org is not None:
            query = query.where(subscriptions.c.org == org)
        async with self._tx("count subscriptions") as c:
            return int((await c.execute(query)).scalar_one())

    async def delete(self, sub_id: str) -> bool:
        async with self._tx(f"delete subscription {sub_id}") as c:
            gone = await c.execute(delete(subscriptions).where(subscriptions.c.id == sub_id))
            await c.execute(
                delete(deliveries).where(
                    deliveries.c.subscription_id == sub_id,
                    deliveries.c.status == DeliveryStatus.PENDING.value,
                )
            )
        return bool(gone.rowcount)

    async def due(self, now: dt.datetime, limit: int = 100) -> list[Subscription]:
        query = (
            select(subscriptions)
            .where(subscriptions.c.status == Status.ACTIVE.value)
            .where(subscriptions.c.next_run_at <= now)
            .order_by(subscriptions.c.next_run_at)
            .limit(limit)
        )
        async with self._tx("read the due subscriptions") as c:
            return [_subscription(r) for r in (await c.execute(query)).mappings()]

    async def claim(self, sub: Subscription, next_run_at: dt.datetime) -> bool:
        """Move the due run on to ``next_run_at``, if no other worker did first."""
        statement = (
            update(subscriptions)
            .where(subscriptions.c.id == sub.id)
            .where(subscriptions.c.status == Status.ACTIVE.value)
            .where(subscriptions.c.next_run_at == sub.next_run_at)
            .values(next_run_at=next_run_at)
        )
        async with self._tx(f"claim subscription {sub.id}") as c:
            claimed = (await c.execute(statement)).rowcount == 1
        if claimed:
            sub.next_run_at = next_run_at
        return claimed

    # ------------------------------------------------------------ standing credentials

    async def credential(self, user: str) -> tuple[str, str] | None:
        """(sealed credential, where it came from) of ``user``."""
        query = select(standing_credentials).where(standing_credentials.c.user == user)
        async with self._tx("read a standing credential") as c:
            row = (await c.execute(query)).mappings().first()
        return None if row is None else (str(row["credential"]), str(row["source"]))

    async def set_credential(self, user: str, sealed: str, source: str, created_by: str) -> None:
        row = {"user": user, "credential": sealed, "source": source, "created_by": created_by,
               "created_at": dt.datetime.now(dt.UTC)}  # fmt: skip
        async with self._tx("save a standing credential") as c:
            await c.execute(upsert(c.dialect.name, standing_credentials, row, ["user"]))

    async def forget_credential(self, user: str) -> bool:
        async with self._tx("forget a standing credential") as c:
            gone = await c.execute(
                delete(standing_credentials).where(standing_credentials.c.user == user)
            )
        return bool(gone.rowcount)

    async def credential_users(self) -> dict[str, str]:
        """Every user with a standing credential, and where it came from."""
        query = select(standing_credentials.c.user, standing_credentials.c.source)
        async with self._tx("list standing credentials") as c:
            return {str(r[0]): str(r[1]) for r in await c.execute(query)}

    # ------------------------------------------------------------ deliveries

    async def add_delivery(self, delivery: Delivery) -> None:
        async with self._tx("queue a delivery") as c:
            await c.execute(insert(deliveries).values(_values(delivery)))

    async def save_delivery(self, delivery: Delivery) -> None:
        async with self._tx("save a delivery") as c:
            await c.execute(
                update(deliveries).where(deliveries.c.id == delivery.id).values(_values(delivery))
            )

    async def due_deliveries(self, now: dt.datetime, limit: int = 100) -> list[Delivery]:
        query = (
            select(deliveries)
            .where(deliveries.c.status == DeliveryStatus.PENDING.value)
            .where(deliveries.c.next_attempt_at <= now)
            .order_by(deliveries.c.next_attempt_at)
            .limit(limit)
        )
        async with self._tx("read the deliveries due") as c:
            return [_delivery(r) for r in (await c.execute(query)).mappings()]

    async def claim_delivery(self, delivery: Delivery, until: dt.datetime) -> bool:
        """Hold a due delivery for one attempt (its next attempt moved to ``until``)."""
        statement = (
            update(deliveries)
            .where(deliveries.c.id == delivery.id)
            .where(deliveries.c.status == DeliveryStatus.PENDING.value)
            .where(deliveries.c.next_attempt_at == delivery.next_attempt_at)
            .values(next_attempt_at=until)
        )
        async with self._tx("claim a delivery") as c:
            claimed = (await c.execute(statement)).rowcount == 1
        if claimed:
            delivery.next_attempt_at = until
        return claimed

    async def deliveries(
        self, *, subscription_id: str | None = None, user: str | None = None
    ) -> list[Delivery]:
        query = select(deliveries).order_by(deliveries.c.created_at, deliveries.c.id)
        if subscription_id is not None:
            query = query.where(deliveries.c.subscription_id == subscription_id)
        if user is not None:
            query = query.where(deliveries.c.user == user)
        async with self._tx("read deliveries") as c:
            return [_delivery(r) for r in (await c.execute(query)).mappings()]

    # ------------------------------------------------------------ the inbox

    async def add_item(self, item: InboxItem) -> None:
        async with self._tx("add to the inbox") as c:
            await c.execute(insert(inbox).values(_values(item)))

    async def items(self, user: str, *, unread: bool = False, limit: int = 50) -> list[InboxItem]:
        """Newest first."""
        query = (
            select(inbox)
            .where(inbox.c.user == user)
            .order_by(inbox.c.created_at.desc(), inbox.c.id.desc())
            .limit(limit)
        )
        if unread:
            query = query.where(inbox.c.read_at.is_(None))
        async with self._tx("read the inbox") as c:
            return [_inbox(r) for r in (await c.execute(query)).mappings()]

    async def mark_read(self, user: str, item_id: str, at: dt.datetime) -> bool:
        statement = (
            update(inbox).where(inbox.c.id == item_id, inbox.c.user == user).values(read_at=at)
        )
        async with self._tx("mark an inbox item read") as c:
            return bool((await c.execute(statement)).rowcount)

    async def forget_user(self, user: str) -> dict[str, int]:
        """Every subscription, delivery, inbox item and standing credential of ``user``."""
        counts: dict[str, int] = {}
        tables: Mapping[str, Any] = {
            "subscriptions": subscriptions, "deliveries": deliveries, "inbox": inbox,
            "standing_credentials": standing_credentials,
        }  # fmt: skip
        async with self._tx(f"delete the subscriptions of {user}") as c:
            for name, table in tables.items():
                gone = await c.execute(delete(table).where(table.c.user == user))
                counts[name] = int(gone.rowcount or 0)
        return counts
