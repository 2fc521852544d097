"""A signed-in ToolContext for tests that run tools directly, as a demo user."""

from __future__ import annotations

from collections.abc import Iterable

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.tools.base import ToolContext


async def signed_in_context(
    erp: ERPNextConnector, user: str, tools: Iterable[str], catalog: Catalog
) -> ToolContext:
    """Log in as ``user`` (password "demo") with ``tools`` allowed."""
    cred = await erp.login(user, "demo")
    session = Session(
        id=f"test-{user}",
        user=user,
        credential=cred,
        roles=frozenset(await erp.roles(cred)),
        allowed_tools=frozenset(tools),
    )
    return ToolContext(session=session, connector=erp, catalog=catalog)
