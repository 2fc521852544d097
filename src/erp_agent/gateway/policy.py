"""Role policy: ERP roles → tool globs, resolved at sign-in against what the ERP grants."""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ConfigError
from erp_agent.gateway.grants import Grants, GrantsCache
from erp_agent.tools.base import Effect, Tool

_PROBES = 8  # concurrent permission questions to the ERP at sign-in


@dataclass(frozen=True)
class RolePolicy:
    everyone: tuple[str, ...]
    roles: Mapping[str, tuple[str, ...]]

    def patterns_for(self, roles: Iterable[str]) -> list[str]:
        patterns = list(self.everyone)
        for role in roles:
            patterns.extend(self.roles.get(role, ()))
        return patterns

    def permits(self, tool_name: str, roles: Iterable[str]) -> bool:
        return any(fnmatch.fnmatchcase(tool_name, p) for p in self.patterns_for(roles))

    def to_dict(self) -> dict[str, Any]:
        return {
            "everyone": list(self.everyone),
            "roles": {r: list(p) for r, p in self.roles.items()},
        }


def load_policy(path: Path | None = None) -> RolePolicy:
    """The role policy from ``path`` or the packaged defaults, validated."""
    source = str(path) if path else "gateway/policy_defaults.yaml"
    text = (
        path.read_text(encoding="utf-8")
        if path
        else (resources.files("erp_agent.gateway") / "policy_defaults.yaml").read_text(
            encoding="utf-8"
        )
    )
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from exc
    return parse_policy(raw, source)


def parse_policy(raw: Any, source: str = "policy") -> RolePolicy:
    if not isinstance(raw, dict) or not isinstance(raw.get("roles", {}), dict):
        raise ConfigError(
            f"{source}: expected a mapping with 'everyone' (list) and 'roles' (role: [globs])"
        )
    everyone = raw.get("everyone") or []
    roles = raw.get("roles") or {}
    problems = []
    unknown = sorted(str(k) for k in raw if k not in ("everyone", "roles"))
    if unknown:
        # A misspelt key ("role:", "everybody:") would otherwise be ignored in silence.
        problems.append(
            f"unknown key(s) {', '.join(map(repr, unknown))}: only 'everyone' and 'roles' are read"
        )
    if not isinstance(everyone, list) or not all(isinstance(p, str) for p in everyone):
        problems.append("'everyone' must be a list of glob strings")
    for role, patterns in roles.items():
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            problems.append(f"role {role!r}: expected a list of glob strings")
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return RolePolicy(tuple(everyone), {str(r): tuple(p) for r, p in roles.items()})


async def erp_grants(
    connector: Connector,
    cred: Credential,
    tools: Iterable[Tool],
    *,
    cache: GrantsCache | None = None,
    roles: Iterable[str] = (),
) -> set[str]:
    """The names of the tools whose every requirement the ERP grants this user (asked as them,
    or reused from ``cache`` when this user with these ``roles`` was asked within its TTL)."""
    tools = list(tools)
    entities = sorted({r.entity for t in tools for r in t.requires if r.entity})
    reports = sorted({r.report for t in tools for r in t.requires if r.report})
    roles = sorted(set(roles))
    saved = await cache.get(cred.user, roles) if cache is not None else None
    needed = {(r.entity, r.right) for t in tools for r in t.requires if r.entity}
    if saved is not None and saved.covers(needed, reports):
        rights = saved
    else:
        rights = await _ask(connector, cred, entities, reports)
        if cache is not None:
            await cache.put(cred.user, roles, rights)
    granted = set()
    for tool in tools:
        ok = True
        for req in tool.requires:
            if req.entity and not rights.entities.get(req.entity, {}).get(req.right, False):
                ok = False
            if req.report and not rights.reports.get(req.report, False):
                ok = False
        if ok:
            granted.add(tool.name)
    return granted


async def _ask(
    connector: Connector, cred: Credential, entities: list[str], reports: list[str]
) -> Grants:
    gate = asyncio.Semaphore(_PROBES)

    async def entity_access(name: str) -> tuple[str, dict[str, bool]]:
        async with gate:
            return name, await connector.access(cred, name)

    async def report_access(name: str) -> tuple[str, bool]:
        async with gate:
            return name, await connector.report_access(cred, name)

    entity_rights = dict(await asyncio.gather(*(entity_access(e) for e in entities)))
    report_rights = dict(await asyncio.gather(*(report_access(r) for r in reports)))
    return Grants(entity_rights, report_rights)


async def resolve_allowed_tools(
    connector: Connector,
    cred: Credential,
    roles: Iterable[str],
    tools: Iterable[Tool],
    policy: RolePolicy,
    *,
    read_only: bool,
    grants: GrantsCache | None = None,
) -> frozenset[str]:
    """Policy ∩ what the ERP grants; no write tool at all for a read-only tenant."""
    roles = list(roles)
    candidates = [
        t
        for t in tools
        if policy.permits(t.name, roles) and not (read_only and t.effect is Effect.WRITE)
    ]
    return frozenset(await erp_grants(connector, cred, candidates, cache=grants, roles=roles))
