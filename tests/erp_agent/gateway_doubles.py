"""Tools and a connector for gateway tests: every write the connector executes is recorded."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ErpRefusal, Refusal
from erp_agent.gateway.gateway import Gateway
from erp_agent.store.memory import MemoryStore
from erp_agent.tools.base import Args, Change, Effect, Tool, ToolContext, ToolRegistry


class RecordingConnector:
    """Only what the test tools use; writes land in ``executed``."""

    def __init__(self) -> None:
        self.executed: list[tuple[str, dict[str, Any]]] = []
        self.executed_on: list[dt.date | None] = []  # the business date each write ran on
        self.refuse_next = False

    async def write(self, user: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        if self.refuse_next:
            self.refuse_next = False
            raise ErpRefusal(
                Refusal("Could not find Customer: Nobody Ltd", "LinkValidationError", 417)
            )
        self.executed.append((user, dict(payload)))
        return {"id": f"DOC-{len(self.executed)}", **payload}


def make_tools(erp: RecordingConnector) -> list[Tool]:
    async def read(ctx: ToolContext, args: Args) -> Any:
        if args.get("customer") == "Forbidden":
            raise ErpRefusal(Refusal("No permission for Customer", "PermissionError", 403))
        return {"rows": [{"customer": args.get("customer"), "total": 10.5}], "exact": True}

    async def prepare(ctx: ToolContext, args: Args) -> Change:
        return Change(
            payload=dict(args), summary=f"Create Lead {args['name']}", document=dict(args)
        )

    async def execute(ctx: ToolContext, payload: Args) -> Any:
        erp.executed_on.append(ctx.today)
        return await erp.write(ctx.session.user, payload)

    schema_read = {
        "type": "object",
        "properties": {
            "customer": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
        },
        "additionalProperties": False,
    }
    schema_write = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "amount": {"type": "number"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    return [
        Tool("sales_invoice.list", "List invoices.", schema_read, Effect.READ, "selling", run=read),
        Tool(
            "lead.create",
            "Create a lead.",
            schema_write,
            Effect.WRITE,
            "crm",
            prepare=prepare,
            execute=execute,
        ),
        Tool(
            "lead.delete",
            "Delete a lead.",
            schema_write,
            Effect.WRITE,
            "crm",
            prepare=prepare,
            execute=execute,
        ),
    ]


def make_gateway(**kwargs: Any) -> tuple[Gateway, RecordingConnector, MemoryStore]:
    erp = RecordingConnector()
    store = MemoryStore()
    registry = ToolRegistry(make_tools(erp))
    connector: Connector = erp  # type: ignore[assignment]  # a double: only what the tools use
    return Gateway(registry, store, connector, load_catalog(), **kwargs), erp, store


def session(
    user: str = "amina@demo.local",
    sid: str = "s1",
    *,
    allowed: set[str] | None = None,
    read_only: bool = False,
) -> Session:
    return Session(
        id=sid,
        user=user,
        credential=Credential.token(user, "k", "s"),
        roles=frozenset({"Sales User"}),
        allowed_tools=frozenset(
            allowed if allowed is not None else {"sales_invoice.list", "lead.create", "lead.delete"}
        ),
        read_only=read_only,
    )
