"""Sign-in: an ERP login becomes a Session with the tools this user may be offered."""

from __future__ import annotations

import asyncio
import secrets

from erp_agent.calls.session import Session
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.gateway.grants import GrantsCache
from erp_agent.gateway.policy import RolePolicy, resolve_allowed_tools
from erp_agent.tools.base import ToolRegistry


async def sign_in(
    connector: Connector,
    registry: ToolRegistry,
    policy: RolePolicy,
    user: str,
    password: str,
    *,
    org: str = "default",
    read_only: bool = False,
    grants: GrantsCache | None = None,
) -> Session:
    """Log in to the ERP as ``user`` and resolve the session's tools (policy ∩ ERP grants)."""
    cred = await connector.login(user, password)
    return await session_for(
        connector, registry, policy, cred, org=org, read_only=read_only, grants=grants
    )


async def session_for(
    connector: Connector,
    registry: ToolRegistry,
    policy: RolePolicy,
    cred: Credential,
    *,
    org: str = "default",
    read_only: bool = False,
    grants: GrantsCache | None = None,
) -> Session:
    """The session of a credential the ERP already accepted (password, API key or SSO);
    ``grants`` reuses what the ERP granted this user with these roles a moment ago."""
    user = cred.user
    roles = frozenset(await connector.roles(cred))
    allowed, default_company = await asyncio.gather(
        resolve_allowed_tools(
            connector, cred, roles, registry, policy, read_only=read_only, grants=grants
        ),
        connector.user_default(cred, "company"),
    )
    return Session(
        id=f"sess_{secrets.token_urlsafe(12)}",
        user=user,
        credential=cred,
        roles=roles,
        org=org,
        allowed_tools=allowed,
        read_only=read_only,
        default_company=default_company,
    )
