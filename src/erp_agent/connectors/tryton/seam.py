"""What the Tryton connector's helper modules (``reads``, ``writes``, ``reports``,
``filling``) call back on the connector (``connector.TrytonConnector``): RPC as the user, an
entity's native model and the cache of its fields, and the record operations they build on.
The helpers import this, never the connector that imports them."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from erp_agent.connectors.base import Record, RecordVersion
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.scope import DataScope
from erp_agent.connectors.tryton.native import Domain, Native


class Tryton(Protocol):
    _fields: dict[str, dict[str, dict[str, Any]]]  # a native model's fields_get, by model

    async def rpc(
        self,
        cred: Credential,
        method: str,
        *args: Any,
        write: bool = False,
        context: Mapping[str, Any] | None = None,
    ) -> Any: ...

    async def data_scope(self, cred: Credential) -> DataScope | None: ...

    async def get(self, cred: Credential, entity: str, record_id: str) -> Record: ...

    async def version(
        self, cred: Credential, entity: str, record_id: str
    ) -> RecordVersion | None: ...

    async def _native(self, cred: Credential, entity: str) -> Native: ...

    async def _all(
        self,
        cred: Credential,
        native: Native,
        domain: Domain,
        names: Sequence[str],
        *,
        deciding: bool = False,
    ) -> builtins.list[Record]: ...

    async def _native_values(
        self, cred: Credential, native: Native, values: Mapping[str, Any]
    ) -> dict[str, Any]: ...

    async def _resolve(self, cred: Credential, relation: str, value: Any) -> Any: ...

    async def _resolve_id(self, cred: Credential, native: Native, record_id: str) -> int: ...

    async def _timestamp(
        self, cred: Credential, native: Native, rid: int, seen: str | None
    ) -> dict[str, Any]: ...
