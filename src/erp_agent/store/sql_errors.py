"""Turn database failures into ``StoreError`` messages that say what happened and what to do."""

from __future__ import annotations

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL

from erp_agent.errors import StoreError, StoreUnavailable

# Driver messages (SQLite's own words) → what the operator should do about them.
_HINTS: tuple[tuple[str, str], ...] = (
    (
        "database is locked",
        "another connection held a write lock for too long; retry, and look for a process "
        "keeping a transaction open on this database",
    ),
    (
        "unable to open database file",
        "check that the directory exists and is writable by this process",
    ),
    (
        "file is not a database",
        "the file is not a SQLite database or is damaged; point the store at another file or "
        "restore it from a backup",
    ),
    (
        "database disk image is malformed",
        "the database file is damaged; restore it from a backup",
    ),
    ("readonly database", "the database file or its directory is read-only for this process"),
    (
        "is not json serializable",
        "convert the value to JSON types first: decimals as strings, datetimes as ISO text",
    ),
    ("unique constraint", "a record with the same key is already stored"),
    ("foreign key", "it refers to a record that is not stored"),
)


# The database could not be reached, or dropped the connection, or no connection was free in
# time: nothing about the request was wrong, and a later try may succeed (a channel says 503).
_UNREACHABLE = (
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    sa_exc.DisconnectionError,
    sa_exc.TimeoutError,
    OSError,
)


def store_error(action: str, error: BaseException, url: URL) -> StoreError:
    """A ``StoreError`` for ``action`` ("save turn t1") that failed with ``error`` on ``url``;
    a ``StoreUnavailable`` when the database could not be reached."""
    where = url.render_as_string(hide_password=True)
    if isinstance(error, sa_exc.DBAPIError):
        reason = str(error.orig)
    elif isinstance(error, sa_exc.StatementError) and error.orig is not None:
        # Raised before reaching the database: a value that cannot be stored.
        reason = f"{type(error.orig).__name__}: {error.orig}"
    else:
        reason = str(error)
    reason = reason.rstrip(". ")
    message = f"Could not {action} in the store {where}: {reason}"
    lowered = reason.lower()
    kind = StoreUnavailable if isinstance(error, _UNREACHABLE) else StoreError
    for needle, hint in _HINTS:
        if needle in lowered:
            return kind(f"{message} ({hint}).")
    return kind(message)
