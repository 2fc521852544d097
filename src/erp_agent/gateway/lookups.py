"""Names looked up in the ERP's master data, reused within one signed-in session.

A request that names a customer, an item or a warehouse is resolved with a short list call on
that master-data doctype, asking only for its id and title (planner/master_data.py); a chat asks
the same few lookups turn after turn. Their results are kept per session — never per ERP or per
user across sessions — for ``ERP_AGENT_MASTER_DATA_TTL`` seconds, so a user is only ever served
what the ERP returned to that same session. A write confirmed in the session drops its entries
(a customer it just created must be found). Any other list call always asks the ERP.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.tools.base import Effect, Tool

Clock = Callable[[], dt.datetime]
SESSIONS_KEPT = 1000  # the least recently used session's entries go first
ENTRIES_PER_SESSION = 256


class LookupCache:
    def __init__(self, catalog: Catalog, ttl: dt.timedelta, clock: Clock) -> None:
        self.ttl = ttl
        self.clock = clock
        # Master data: the doctypes a metric can be cut or filtered by (customers, items…).
        self._titles = {
            dim.entity: _title(catalog, dim.entity)
            for dim in catalog.dimensions.values()
            if dim.entity in catalog.entities
        }
        self._sessions: OrderedDict[tuple[str, str], OrderedDict[str, tuple[dt.datetime, Any]]]
        self._sessions = OrderedDict()

    def applies(self, tool: Tool, args: Mapping[str, Any]) -> bool:
        """A name lookup: a list of a master-data doctype asking for its id and title only."""
        if self.ttl <= dt.timedelta(0) or tool.effect is not Effect.READ or tool.action != "list":
            return False
        if tool.entity not in self._titles:
            return False
        fields = args.get("fields")
        title = self._titles[tool.entity]
        wanted = {"id"} if title is None else {"id", title}
        return isinstance(fields, list) and bool(fields) and set(map(str, fields)) <= wanted

    def get(self, session: Session, tool: Tool, args: Mapping[str, Any]) -> Any | None:
        entries = self._sessions.get(_owner(session))
        found = entries.get(_key(tool, args, session)) if entries is not None else None
        if found is None or self.clock() - found[0] >= self.ttl:
            return None
        self._sessions.move_to_end(_owner(session))
        return copy.deepcopy(found[1])

    def put(self, session: Session, tool: Tool, args: Mapping[str, Any], data: Any) -> None:
        entries = self._sessions.setdefault(_owner(session), OrderedDict())
        self._sessions.move_to_end(_owner(session))
        entries[_key(tool, args, session)] = (self.clock(), copy.deepcopy(data))
        while len(entries) > ENTRIES_PER_SESSION:
            entries.popitem(last=False)
        while len(self._sessions) > SESSIONS_KEPT:
            self._sessions.popitem(last=False)

    def forget(self, session: Session) -> None:
        """A write in this session (or its end): its next lookups ask the ERP."""
        self._sessions.pop(_owner(session), None)


def _title(catalog: Catalog, entity: str) -> str | None:
    title = catalog.entities[entity].title_field
    return title.name if title is not None else None


def _owner(session: Session) -> tuple[str, str]:
    return (session.id, session.user)


def _key(tool: Tool, args: Mapping[str, Any], session: Session) -> str:
    # The company chosen in the session can scope what a list returns.
    return json.dumps([tool.name, session.company, args], sort_keys=True, default=str)
