"""The loaded catalog: one immutable object the engine, tools and connectors query by name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TypeVar

from pydantic import Field as PydanticField

from erp_agent.catalog._base import Frozen
from erp_agent.catalog.entities import Entity, Module, Report
from erp_agent.catalog.maps import ConnectorMaps, EntityMap, ReportMap
from erp_agent.catalog.metrics import Dimension, Metric
from erp_agent.errors import CatalogError

_T = TypeVar("_T")


def _lookup(kind: str, name: str, table: Mapping[str, _T], where: str = "the catalog") -> _T:
    try:
        return table[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(table), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CatalogError(f"unknown {kind} {name!r} in {where}{hint}") from None


class Catalog(Frozen):
    """Canonical modules, entities and reports, each connector's native maps, and the metrics
    (with their dimensions) of the semantic layer."""

    modules: dict[str, Module]
    entities: dict[str, Entity]
    reports: dict[str, Report]
    connectors: dict[str, ConnectorMaps]
    dimensions: dict[str, Dimension] = PydanticField(default_factory=dict)
    metrics: dict[str, Metric] = PydanticField(default_factory=dict)

    def metric(self, name: str) -> Metric:
        """The metric called ``name`` (``CatalogError`` if unknown)."""
        return _lookup("metric", name, self.metrics)

    def dimension(self, name: str) -> Dimension:
        """The dimension called ``name`` (``CatalogError`` if unknown)."""
        return _lookup("dimension", name, self.dimensions)

    def module(self, name: str) -> Module:
        """The module called ``name`` (``CatalogError`` if unknown)."""
        return _lookup("module", name, self.modules)

    def entity(self, name: str) -> Entity:
        """The entity called ``name`` (``CatalogError`` if unknown)."""
        return _lookup("entity", name, self.entities)

    def report(self, name: str) -> Report:
        """The report called ``name`` (``CatalogError`` if unknown)."""
        return _lookup("report", name, self.reports)

    def entities_for_module(self, module: str) -> tuple[Entity, ...]:
        """Entities that belong to ``module``, primary or secondary, in catalog order."""
        self.module(module)
        return tuple(e for e in self.entities.values() if module in e.modules)

    def reports_for_module(self, module: str) -> tuple[Report, ...]:
        """Reports of ``module``."""
        self.module(module)
        return tuple(r for r in self.reports.values() if r.module == module)

    def with_related(self, modules: Iterable[str]) -> tuple[str, ...]:
        """The given modules followed by the modules they name as related (one hop, no repeats)."""
        chosen = [self.module(m).name for m in modules]
        for name in list(chosen):
            chosen += [r for r in self.modules[name].related if r not in chosen]
        return tuple(chosen)

    def maps(self, connector: str) -> ConnectorMaps:
        """All native maps of ``connector`` (e.g. ``"erpnext"``)."""
        return _lookup("connector", connector, self.connectors)

    def native(self, connector: str, entity: str) -> EntityMap:
        """How ``connector`` names ``entity`` (``CatalogError`` if it does not support it)."""
        self.entity(entity)
        return _lookup("entity", entity, self.maps(connector).entities, f"the {connector} maps")

    def native_report(self, connector: str, report: str) -> ReportMap:
        """How ``connector`` runs ``report``."""
        self.report(report)
        return _lookup("report", report, self.maps(connector).reports, f"the {connector} maps")

    def find_document_ids(self, connector: str, text: str) -> list[tuple[Entity, str]]:
        """(entity, id) for every document id of a known naming pattern mentioned in ``text``."""
        return [
            (self.entities[emap.entity], doc_id)
            for emap in self.maps(connector).entities.values()
            for doc_id in emap.find_ids(text)
        ]

    @property
    def field_count(self) -> int:
        """Canonical fields over all entities, row fields of tables included."""
        return sum(
            len(e.fields) + sum(len(f.fields) for f in e.fields.values())
            for e in self.entities.values()
        )
