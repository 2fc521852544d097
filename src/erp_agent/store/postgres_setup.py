"""What PostgreSQL needs that SQLite does not: text without NUL.

PostgreSQL's text and jsonb cannot hold U+0000 (psycopg refuses such a parameter, jsonb the
``\\u0000`` escape), so one stray NUL — in an id a client sent, or in a record the ERP returned —
would fail the whole transaction. The HTTP layer refuses NUL in what clients send; here, the
last line, every string parameter and every JSON document has it replaced by U+FFFD before it
reaches the database: a lookup by such an id finds nothing, a value is stored all but that
character.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

REPLACEMENT = "\ufffd"
# A \u0000 escape that is not itself an escaped backslash followed by "u0000".
_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def without_nul(value: Any) -> Any:
    """``value`` (a string, or tuples/lists/dicts of them) with every NUL replaced."""
    if isinstance(value, str):
        return value.replace("\x00", REPLACEMENT) if "\x00" in value else value
    if isinstance(value, dict):
        return {k: without_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(without_nul(v) for v in value)
    return value


def json_without_nul(dumps: Callable[[Any], str]) -> Callable[[Any], str]:
    """A JSON serializer whose documents never carry a ``\\u0000`` escape (jsonb refuses it)."""

    def serialize(value: Any) -> str:
        text = dumps(value)
        return _NUL_ESCAPE.sub(r"\1\\ufffd", text) if "\\u0000" in text else text

    return serialize


def configure_postgres(engine: Engine) -> None:
    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _no_nul(
        _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool
    ) -> tuple[str, Any]:
        return statement, without_nul(parameters)
