"""``SQLResultStore``: results in the store's database (SQLAlchemy Core, async engine)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json

from sqlalchemy import and_, delete, insert, select
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncEngine

from erp_agent.errors import StoreError
from erp_agent.results.store import ExportRecord, ResultRecord, ResultStore
from erp_agent.store.tables import exports, results

# Strict JSON as the store writes it (NaN is not JSON; PostgreSQL refuses it); Decimals and
# dates, which tool results may carry, as their text.
json_dumps = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False, default=str)


class SQLResultStore(ResultStore):
    """Results in the ``results`` table of ``engine``'s database. Create the engine with
    ``json_serializer=json_dumps``."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def save(self, record: ResultRecord) -> None:
        values = {
            "id": record.id,
            "user": record.user,
            "tool": record.tool,
            "entity": record.entity,
            "title": record.title,
            # Decimals and dates as text: the store's engine writes strict JSON only.
            "data": json.loads(json_dumps(record.data)),
            "total_rows": record.total_rows,
            "created_at": record.created_at,
        }
        try:
            async with self._engine.begin() as connection:
                await connection.execute(insert(results).values(values))
        except (sa_exc.SQLAlchemyError, ValueError, TypeError) as error:
            raise StoreError(f"Could not save result {record.id}: {error}") from error

    async def load(self, result_id: str) -> ResultRecord | None:
        query = select(results).where(results.c.id == result_id)
        try:
            async with self._engine.connect() as connection:
                row = (await connection.execute(query)).mappings().first()
        except sa_exc.SQLAlchemyError as error:
            raise StoreError(f"Could not read result {result_id}: {error}") from error
        if row is None:
            return None
        return ResultRecord(
            id=row["id"],
            user=row["user"],
            tool=row["tool"],
            data=row["data"],
            entity=row["entity"],
            title=row["title"],
            created_at=row["created_at"],
        )

    async def forget(self, *, user: str | None = None, before: dt.datetime | None = None) -> int:
        query = delete(results)
        if user is not None:
            query = query.where(results.c.user == user)
        if before is not None:
            query = query.where(results.c.created_at < before)
        try:
            async with self._engine.begin() as connection:
                return int((await connection.execute(query)).rowcount or 0)
        except sa_exc.SQLAlchemyError as error:
            raise StoreError(f"Could not delete results: {error}") from error

    async def add_export(self, export: ExportRecord) -> None:
        key = and_(exports.c.result_id == export.result_id, exports.c.format == export.format)
        try:
            async with self._engine.begin() as connection:
                # Delete and insert in one transaction: the same on SQLite and PostgreSQL.
                await connection.execute(delete(exports).where(key))
                await connection.execute(insert(exports).values(dataclasses.asdict(export)))
        except sa_exc.SQLAlchemyError as error:
            raise StoreError(f"Could not index export {export.path}: {error}") from error

    async def find_export(self, user: str, result_id: str, fmt: str) -> ExportRecord | None:
        query = select(exports).where(
            exports.c.result_id == result_id, exports.c.format == fmt, exports.c.user == user
        )
        try:
            async with self._engine.connect() as connection:
                row = (await connection.execute(query)).mappings().first()
        except sa_exc.SQLAlchemyError as error:
            raise StoreError(f"Could not read the export of {result_id}: {error}") from error
        return None if row is None else ExportRecord(**row)

    async def drop_exports(
        self, *, user: str | None = None, expired_at: dt.datetime | None = None
    ) -> list[ExportRecord]:
        conditions = []
        if user is not None:
            conditions.append(exports.c.user == user)
        if expired_at is not None:
            conditions.append(exports.c.expires_at <= expired_at)
        try:
            async with self._engine.begin() as connection:
                found = (await connection.execute(select(exports).where(*conditions))).mappings()
                gone = [ExportRecord(**row) for row in found.all()]
                for export in gone:
                    await connection.execute(
                        delete(exports).where(
                            exports.c.result_id == export.result_id,
                            exports.c.format == export.format,
                        )
                    )
        except sa_exc.SQLAlchemyError as error:
            raise StoreError(f"Could not delete exports: {error}") from error
        return gone
