"""What the model is sent of the tools, and what it is told a result was read within.

- The tools array: each offered tool's definition as this user sees it (``Tool.schema``), the
  same bytes for the whole conversation (it depends on the tool and the session only).
- Defaults the model was shown (a report's company filled from the user's ERP defaults) go into
  a call that leaves them out, before the gateway checks it against the full schema.
- The user's data scope (the ERP's User Permissions: a branch, a company, a territory) is read
  once per session and stated in the session block and beside every record result, so an empty
  result under a restriction never reads as "nothing at all".
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.connectors.base import Connector
from erp_agent.errors import ErpAgentError
from erp_agent.tools.base import Shape, Tool

Restrictions = tuple[tuple[str, tuple[str, ...]], ...]
SCOPE_SECONDS = 300.0  # a session's data scope is read again after this long
_SESSIONS_KEPT = 2048
# Results read from the ERP's records (not a display block, a tool list or passages).
_READS = (Shape.ROWS, Shape.METRIC, Shape.REPORT, Shape.WHOLE)


def schemas(tools: Sequence[Tool], session: Session) -> list[dict[str, Any]]:
    return [tool.schema(session) for tool in tools]


def digest(schema: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(schema).encode()).hexdigest()


def with_defaults(tool: Tool, shown: dict[str, Any] | None, arguments: Any) -> Any:
    """``arguments`` with the defaults the model was shown for this user and left out (values
    the full schema has no default for: a report's company, the user's own)."""
    if shown is None or not isinstance(arguments, dict):
        return arguments
    given = shown.get("function", {}).get("parameters", {}).get("properties", {})
    base = tool.parameters.get("properties", {})
    filled = dict(arguments)
    for name, prop in given.items():
        if (
            isinstance(prop, dict)
            and "default" in prop
            and name not in filled
            and "default" not in (base.get(name) or {})
        ):
            filled[name] = prop["default"]
    return filled


class Scopes:
    """Each session's data scope, as the ERP says it (``Connector.data_scope``), kept a few
    minutes: the restrictions of the user's reads, never what widens them (shared records)."""

    def __init__(self, connector: Connector) -> None:
        self.connector = connector
        self._kept: OrderedDict[str, tuple[float, Restrictions]] = OrderedDict()

    async def of(self, session: Session) -> Restrictions:
        found = self._kept.get(session.id)
        now = time.monotonic()
        if found is not None and found[0] > now:
            return found[1]
        try:
            scope = await self.connector.data_scope(session.credential)
        except ErpAgentError:
            scope = None  # not known: nothing is said rather than something wrong
        restrictions: Restrictions = tuple(
            (what, values)
            for what, values in (scope.restrictions if scope is not None else ())
            if not what.startswith("shared ")
        )
        self._kept[session.id] = (now + SCOPE_SECONDS, restrictions)
        self._kept.move_to_end(session.id)
        while len(self._kept) > _SESSIONS_KEPT:
            self._kept.popitem(last=False)
        return restrictions


def scope_note(tool: Tool | None, restrictions: Restrictions, content: dict[str, Any]) -> str:
    """What a record result was read within, in words ('' when nothing restricts it)."""
    if tool is None or tool.shape not in _READS or not restrictions:
        return ""
    where = "; ".join(f"{what} {', '.join(values)}" for what, values in restrictions)
    note = (
        f"Restricted to {where} by the user's ERP permissions: records outside it are not "
        "visible to them."
    )
    if _empty(content):
        note += " Nothing was found within it; that does not mean there is none outside it."
    return note


def _empty(content: dict[str, Any]) -> bool:
    result = content.get("result", content)
    if isinstance(result, dict):
        for key in ("records", "rows", "page"):
            if key in result and not result[key]:
                return True
        count = result.get("count", result.get("record_count"))
        return count == 0
    return isinstance(result, list) and not result
