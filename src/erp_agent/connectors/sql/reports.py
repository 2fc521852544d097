"""The report plane of a bespoke database: named reports are hand-written statements in the
mapping, with typed parameters (the catalog's report parameter syntax) bound as ``:name`` and
the principal's scope bound as ``:tenant`` and ``:branches``. Each becomes a report tool with a
strict schema; the model chooses a report and its parameter values, never SQL.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError

from erp_agent.catalog import Catalog
from erp_agent.catalog.entities import Report
from erp_agent.catalog.fields import ParamType, ReportParam
from erp_agent.connectors.sql.mapping import Mapping as SQLMapping
from erp_agent.connectors.sql.principals import Principal
from erp_agent.connectors.sql.statements import invalid
from erp_agent.errors import ConfigError

_BIND = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_SCOPE = frozenset({"tenant", "branches"})


@dataclass(frozen=True)
class SQLReport:
    report: Report
    sql: str
    binds: tuple[str, ...]
    columns: tuple[dict[str, str], ...]

    @property
    def entity(self) -> str | None:
        return self.report.entity

    def statement(self, given: Mapping[str, Any], principal: Principal) -> sa.TextClause:
        values: dict[str, Any] = {"tenant": principal.tenant, "branches": list(principal.branches)}
        for name, param in self.report.params.items():
            raw = given.get(name)
            if raw is None:
                raw = param.default
            if raw == "today" and param.type is ParamType.DATE:
                raw = dt.date.today().isoformat()
            values[name] = _value(param, raw)
        unknown = sorted(set(given) - set(self.report.params))
        if unknown:
            raise invalid(f"report {self.report.name} has no parameter {', '.join(unknown)}")
        stmt = sa.text(self.sql)
        expanding: list[sa.BindParameter[Any]] = [
            sa.bindparam(n, expanding=True)
            for n in self.binds
            if n == "branches" or self.report.params.get(n, _NOLIST).type is ParamType.LIST
        ]
        if expanding:
            stmt = stmt.bindparams(*expanding)
        return stmt.bindparams(**{n: values.get(n) for n in self.binds})


_NOLIST = ReportParam.model_validate({"name": "_", "spec": "string"})


def _value(param: ReportParam, raw: Any) -> Any:
    if raw is None:
        return None
    kind = param.type
    if kind is ParamType.LIST:
        items = raw if isinstance(raw, list) else [raw]
        item = ReportParam.model_validate({"name": param.name, "type": param.item or "string",
                                           "values": param.values, "target": param.target})  # fmt: skip
        return [_value(item, v) for v in items]
    try:
        if kind is ParamType.DATE:
            return dt.date.fromisoformat(str(raw)[:10])
        if kind is ParamType.INTEGER:
            return int(raw)
        if kind is ParamType.NUMBER:
            return Decimal(str(raw))
        if kind is ParamType.BOOLEAN:
            return bool(raw)
    except (ValueError, InvalidOperation):
        raise invalid(f"{raw!r} is not a valid {kind} for {param.name}") from None
    if kind is ParamType.ENUM and str(raw) not in param.values:
        raise invalid(f"{param.name} must be one of {', '.join(param.values)}, not {raw!r}")
    return str(raw)


def parse(mapping: SQLMapping, catalog: Catalog) -> dict[str, SQLReport]:
    out: dict[str, SQLReport] = {}
    problems: list[str] = []
    for name, spec in mapping.reports.items():
        where = f"{mapping.source}: reports.{name}"
        if spec.module not in catalog.modules:
            problems.append(f"{where}: unknown module {spec.module!r}")
            continue
        if spec.entity is not None and spec.entity not in mapping.entities:
            problems.append(f"{where}: entity {spec.entity!r} is not mapped")
            continue
        try:
            report = Report.model_validate(
                {
                    "name": name,
                    "label": spec.label,
                    "description": spec.description,
                    "module": spec.module,
                    "keywords": spec.keywords,
                    "entity": spec.entity,
                    "params": spec.params,
                    "source": mapping.source,
                }
            )
        except ValidationError as exc:
            problems.append(f"{where}: {exc.errors()[0]['msg']}")
            continue
        binds = tuple(dict.fromkeys(_BIND.findall(spec.sql)))
        stray = sorted(set(binds) - set(report.params) - _SCOPE)
        if stray:
            problems.append(f"{where}: the statement binds undeclared :{', :'.join(stray)}")
            continue
        if spec.entity is not None:
            scoped = mapping.entities[spec.entity].scope
            if "branch" in scoped and "branches" not in binds:
                problems.append(
                    f"{where}: the statement must bind :branches (the entity is branch-scoped)"
                )
                continue
        out[name] = SQLReport(report, spec.sql, binds, spec.columns)
    if problems:
        raise ConfigError("; ".join(problems))
    return out
