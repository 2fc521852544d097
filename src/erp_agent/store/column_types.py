"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.engine import Dialect
from sqlalchemy.types import DateTime, TypeDecorator


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware datetime, stored as UTC and read back as aware UTC.

    SQLite has no time zones (it hands back naive values) and PostgreSQL answers in the session's
    zone; normalising to UTC on the way in and out makes both return the same instant, and keeps
    SQLite's text ordering chronological. Naive datetimes are refused: their instant is unknown.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"naive datetime {value.isoformat()} cannot be stored: give it a time zone "
                "(for example datetime.now(datetime.UTC))"
            )
        return value.astimezone(dt.UTC)

    def process_result_value(
        self, value: dt.datetime | None, dialect: Dialect
    ) -> dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)
