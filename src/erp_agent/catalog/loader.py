"""Read and validate a catalog directory; every problem names its file and entity.

Layout (relative to the catalog root; the packaged one is this package's folder)::

    data/modules.yaml               module name -> module
    data/common.yaml                fields: every entity has (id, modified); transaction_fields:
                                    every transaction has too (docstatus); lifecycle: the
                                    canonical states of every transaction (draft/booked/cancelled)
    data/entities/<module>.yaml     entity name -> entity; the file names its primary module
    data/reports.yaml               report name -> report
    data/metrics.yaml               dimensions: and metrics: of the semantic layer (optional)
    maps/<connector>/_common.yaml   fields: / transaction_fields: native names of the common fields;
                                    transaction_lifecycle: native states of the canonical ones;
                                    partial: true when entities map only some fields
    maps/<connector>/<module>.yaml  entities: / reports: native maps of that module's items
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from erp_agent.catalog._validate import cross_check
from erp_agent.catalog.catalog import Catalog
from erp_agent.catalog.entities import Entity, Module, Report
from erp_agent.catalog.maps import ConnectorMaps, EntityMap, ReportMap
from erp_agent.catalog.metrics import Dimension, Metric
from erp_agent.catalog.metrics_check import check_metrics
from erp_agent.errors import CatalogError

PACKAGED_ROOT = Path(__file__).parent

_M = TypeVar("_M", bound=BaseModel)


def load_catalog(path: Path | None = None, *, site: str | Path | None = None) -> Catalog:
    """Load and validate the catalog under ``path`` (default: the packaged one, loaded once),
    with a site's overlay (``<site>/catalog``, the same layout) merged in when given.

    Raises ``CatalogError`` listing every problem found, each naming file, item and cause.
    """
    if site is not None:
        return _with_overlay(path or PACKAGED_ROOT, Path(site).resolve() / "catalog")
    if path is None:
        return _packaged()
    return _Loader(path).load()


@functools.cache
def _packaged() -> Catalog:
    return _Loader(PACKAGED_ROOT).load()


@functools.cache
def _with_overlay(root: Path, overlay: Path) -> Catalog:
    if not overlay.is_dir():
        raise CatalogError(
            f"ERP_AGENT_SITE_DIR has no 'catalog' folder ({overlay}); create it, or unset the "
            "setting (docs/extending.md)."
        )
    return _Loader(root, overlay).load()


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` deep-merged over ``base``: mappings merge, anything else is replaced."""
    out = dict(base)
    for key, value in extra.items():
        current = out.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            out[key] = _merge(current, value)
        else:
            out[key] = value
    return out


def _format(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader:
    def __init__(self, root: Path, overlay: Path | None = None) -> None:
        self.root = root
        self.overlay = overlay
        self.problems: list[str] = []

    def load(self) -> Catalog:
        if not (self.root / "data").is_dir():
            raise CatalogError(f"{self.root.name}: no 'data' folder; is this a catalog root?")
        raw_modules = self._read("data/modules.yaml")
        modules = self._items("data/modules.yaml", raw_modules, "module", Module)
        # Names as declared, so one invalid module does not make its files "unknown" too.
        module_names = set(raw_modules)
        common_file = self._read("data/common.yaml")
        common = self._mapping("data/common.yaml", "fields", common_file)
        per_kind = {
            "transaction": self._mapping("data/common.yaml", "transaction_fields", common_file)
        }
        self.lifecycle = self._mapping("data/common.yaml", "lifecycle", common_file)
        entities = self._entities(module_names, common, per_kind)
        transactions = {n for n, e in entities.items() if e.kind == "transaction"}
        reports = self._items(
            "data/reports.yaml", self._read("data/reports.yaml"), "report", Report
        )
        connectors = {
            folder.name: self._connector(folder, module_names, transactions)
            for folder in sorted((self.root / "maps").glob("*"))
            if folder.is_dir()
        }
        raw_metrics = (
            self._read("data/metrics.yaml") if (self.root / "data/metrics.yaml").exists() else {}
        )
        dimensions = self._items(
            "data/metrics.yaml", self._mapping("data/metrics.yaml", "dimensions", raw_metrics),
            "dimension", Dimension,
        )  # fmt: skip
        metrics = self._items(
            "data/metrics.yaml", self._mapping("data/metrics.yaml", "metrics", raw_metrics),
            "metric", Metric,
        )  # fmt: skip
        if self.problems:
            raise CatalogError(self.problems)
        catalog = Catalog(
            modules=modules, entities=entities, reports=reports, connectors=connectors,
            dimensions=dimensions, metrics=metrics,
        )  # fmt: skip
        problems = cross_check(catalog) + check_metrics(catalog)
        if problems:
            raise CatalogError(problems)
        return catalog

    def _read(self, rel: str) -> dict[str, Any]:
        """The packaged file, with the site overlay's file of the same name merged over it."""
        base = self._read_file(self.root / rel, rel) if (self.root / rel).exists() else None
        extra = None
        if self.overlay is not None and (self.overlay / rel).exists():
            extra = self._read_file(self.overlay / rel, f"site overlay {rel}")
        if base is None and extra is None:
            self.problems.append(f"{rel}: file is missing")
            return {}
        return _merge(base or {}, extra or {})

    def _files(self, folder: str) -> list[str]:
        """The YAML files of ``folder`` in the catalog or its overlay (by name, sorted)."""
        roots = [self.root] + ([self.overlay] if self.overlay is not None else [])
        names = {p.name for root in roots for p in (root / folder).glob("*.yaml")}
        return sorted(names)

    def _read_file(self, path: Path, rel: str) -> dict[str, Any]:
        try:
            # libyaml's parser when PyYAML has it: the same safe loading, several times faster.
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
        except FileNotFoundError:
            self.problems.append(f"{rel}: file is missing")
            return {}
        except yaml.YAMLError as exc:
            self.problems.append(f"{rel}: not valid YAML: {exc}")
            return {}
        if data is None:
            return {}
        if not isinstance(data, dict):
            self.problems.append(f"{rel}: must be a mapping of names to declarations")
            return {}
        return data

    def _packaged_names(self, rel: str) -> set[str]:
        path = self.root / rel
        if not path.exists():
            return set()
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
        return set(data) if isinstance(data, dict) else set()

    def _unknown(self, rel: str, kind: str, name: str, known: set[str]) -> None:
        """An overlay entry that extends nothing: most likely a typo of a name."""
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        self.problems.append(
            f"site overlay {rel}: {kind} {name!r} is not in the catalog.{hint} To add a new "
            f"{kind}, declare it whole (label, plural, kind, fields); see docs/extending.md."
        )

    def _mapping(self, rel: str, key: str, parent: Mapping[str, Any]) -> dict[str, Any]:
        """``parent[key]`` when it is a mapping (or absent: empty); else a problem."""
        value = parent.get(key) or {}
        if isinstance(value, dict):
            return value
        self.problems.append(f"{rel}: {key!r} must be a mapping, not {type(value).__name__}")
        return {}

    def _build(self, rel: str, kind: str, name: str, model: type[_M], data: object) -> _M | None:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            self.problems.append(f"{rel}: {kind} {name!r}: {_format(exc)}")
        except ValueError as exc:  # raised while expanding compact specs
            self.problems.append(f"{rel}: {kind} {name!r}: {exc}")
        return None

    def _items(
        self, rel: str, declared: Mapping[str, object], kind: str, model: type[_M]
    ) -> dict[str, _M]:
        out: dict[str, _M] = {}
        for name, raw in declared.items():
            if not isinstance(raw, dict):
                self.problems.append(f"{rel}: {kind} {name!r}: must be a mapping")
                continue
            data = {**raw, "name": name, "source": rel}
            item = self._build(rel, kind, name, model, data)
            if item is not None:
                out[name] = item
        return out

    def _entities(
        self, modules: set[str], common: dict[str, Any], per_kind: Mapping[str, dict[str, Any]]
    ) -> dict[str, Entity]:
        entities: dict[str, Entity] = {}
        known = {
            name for file in self._files("data/entities")
            for name in self._packaged_names(f"data/entities/{file}")
        }  # fmt: skip
        for file in self._files("data/entities"):
            path = Path(file)
            rel = f"data/entities/{file}"
            if path.stem not in modules:
                self.problems.append(f"{rel}: unknown module {path.stem!r} (file name = module)")
                continue
            for name, raw in self._read(rel).items():
                if name not in known and isinstance(raw, dict) and "kind" not in raw:
                    self._unknown(rel, "entity", name, known)
                    continue
                if name in entities:
                    first = entities[name].source
                    self.problems.append(f"{rel}: entity {name!r}: duplicate (also in {first})")
                    continue
                if not isinstance(raw, dict):
                    self.problems.append(f"{rel}: entity {name!r}: must be a mapping")
                    continue
                data = dict(raw)
                also = data.pop("also_in", [])
                data["modules"] = [path.stem, *(also if isinstance(also, list) else [also])]
                # Common fields come first (id) unless the entity redeclares them.
                # ... and fields every entity of its kind has (docstatus), after its own.
                kind_fields = per_kind.get(str(data.get("kind")), {})
                own = self._mapping(f"{rel}: {name}", "fields", data)
                data["fields"] = {
                    **common,
                    **own,
                    **{k: v for k, v in kind_fields.items() if k not in own},
                }
                if data.get("kind") == "transaction" and self.lifecycle:
                    data.setdefault("lifecycle", self.lifecycle)  # draft -> booked -> cancelled
                data.update(name=name, source=rel)
                entity = self._build(rel, "entity", name, Entity, data)
                if entity is not None:
                    entities[name] = entity
        return entities

    def _connector(self, folder: Path, modules: set[str], transactions: set[str]) -> ConnectorMaps:
        base = f"maps/{folder.name}"
        common_file = self._read(f"{base}/_common.yaml")
        common = self._mapping(f"{base}/_common.yaml", "fields", common_file)
        of_transactions = self._mapping(f"{base}/_common.yaml", "transaction_fields", common_file)
        lifecycle = self._mapping(f"{base}/_common.yaml", "transaction_lifecycle", common_file)
        entity_maps: dict[str, EntityMap] = {}
        report_maps: dict[str, ReportMap] = {}
        for file in self._files(base):
            path = Path(file)
            rel = f"{base}/{file}"
            if path.stem == "_common":
                continue
            if path.stem not in modules:
                self.problems.append(f"{rel}: unknown module {path.stem!r} (file name = module)")
                continue
            data = self._read(rel)
            for key in set(data) - {"entities", "reports"}:
                self.problems.append(f"{rel}: unknown section {key!r} (use entities/reports)")
            for name, raw in self._mapping(rel, "entities", data).items():
                if name in entity_maps:
                    self.problems.append(f"{rel}: entity map {name!r}: duplicate")
                    continue
                emap = dict(raw) if isinstance(raw, dict) else {}
                fields = {**common, **self._mapping(f"{rel}: {name}", "fields", emap)}
                if name in transactions:
                    fields = {**of_transactions, **fields}
                    if lifecycle:
                        emap.setdefault("lifecycle", lifecycle)
                emap.update(entity=name, source=rel, fields=fields)
                built = self._build(rel, "entity map", name, EntityMap, emap)
                if built is not None:
                    entity_maps[name] = built
            for name, raw in self._mapping(rel, "reports", data).items():
                rmap = {**raw, "report": name, "source": rel} if isinstance(raw, dict) else raw
                built_r = self._build(rel, "report map", name, ReportMap, rmap)
                if built_r is not None:
                    report_maps[name] = built_r
        return ConnectorMaps(
            name=folder.name, entities=entity_maps, reports=report_maps,
            partial=bool(common_file.get("partial", False)),
        )  # fmt: skip
