"""Checks across items: names that must refer to something, maps that must match the canonical
side. Each problem is one line naming the file, the item and what is wrong."""

from __future__ import annotations

from collections.abc import Mapping

from erp_agent.catalog.catalog import Catalog
from erp_agent.catalog.fields import Field, FieldType, ParamType
from erp_agent.catalog.maps import EntityMap, FieldMap, ReportMap, Transform
from erp_agent.catalog.templates import placeholders


def cross_check(catalog: Catalog) -> list[str]:
    """Every cross-reference problem in ``catalog`` (empty when it is consistent)."""
    problems: list[str] = []
    modules, entities = catalog.modules, catalog.entities
    for module in modules.values():
        for related in module.related:
            if related not in modules or related == module.name:
                problems.append(
                    f"{module.source}: module {module.name!r}: bad related module {related!r}"
                )
    for entity in entities.values():
        where = f"{entity.source}: entity {entity.name!r}"
        problems += [f"{where}: unknown module {m!r}" for m in entity.modules if m not in modules]
        for path, field in _all_fields(entity.fields):
            if field.target is not None and field.target not in entities:
                problems.append(f"{where}: field {path!r} links to unknown entity {field.target!r}")
    for report in catalog.reports.values():
        where = f"{report.source}: report {report.name!r}"
        if report.module not in modules:
            problems.append(f"{where}: unknown module {report.module!r}")
        if report.entity is not None and report.entity not in entities:
            problems.append(f"{where}: unknown entity {report.entity!r}")
        for param in report.params.values():
            if param.target is not None and param.target not in entities:
                problems.append(
                    f"{where}: parameter {param.name!r} links to unknown entity {param.target!r}"
                )
    for maps in catalog.connectors.values():
        for emap in maps.entities.values():
            problems += _check_entity_map(catalog, emap, partial=maps.partial)
        for rmap in maps.reports.values():
            problems += _check_report_map(catalog, rmap)
    return problems


def _all_fields(fields: Mapping[str, Field]) -> list[tuple[str, Field]]:
    """(dotted path, field) for every field, row fields of tables as ``items.item``."""
    return [
        (path, field)
        for name, top in fields.items()
        for path, field in [(name, top), *((f"{name}.{k}", f) for k, f in top.fields.items())]
    ]


def _file_module(source: str) -> str:
    return source.rsplit("/", 1)[-1].removesuffix(".yaml")


def _check_entity_map(catalog: Catalog, emap: EntityMap, *, partial: bool = False) -> list[str]:
    where = f"{emap.source}: entity map {emap.entity!r}"
    entity = catalog.entities.get(emap.entity)
    if entity is None:
        return [f"{where}: unknown entity {emap.entity!r}"]
    problems = []
    if _file_module(emap.source) != entity.modules[0]:
        problems.append(f"{where}: belongs in the {entity.modules[0]!r} file (its primary module)")
    problems += _check_field_maps(where, entity.fields, emap.fields, partial=partial)
    if emap.lifecycle is not None:
        if entity.lifecycle is None:
            problems.append(f"{where}: maps a lifecycle, but the entity has none")
        else:
            problems += [f"{where}: {p}" for p in emap.lifecycle.problems(entity.lifecycle)]
    if emap.link is not None:
        try:
            unknown = [
                n
                for n in placeholders(emap.link)
                if n not in ("base_url", "database") and n not in entity.fields
            ]
        except ValueError as exc:
            unknown, problems = [], [*problems, f"{where}: link: {exc}"]
        problems += [f"{where}: link uses unknown field {{{n}}}" for n in unknown]
    return problems


def _check_field_maps(
    where: str, fields: Mapping[str, Field], maps: Mapping[str, FieldMap], *, partial: bool = False
) -> list[str]:
    problems = [
        f"{where}: maps {n!r}, which the entity does not have" for n in maps if n not in fields
    ]
    for name, field in fields.items():
        fmap = maps.get(name)
        if fmap is None:
            if not partial:
                problems.append(f"{where}: field {name!r} has no native map")
            continue
        if field.type is FieldType.TABLE:
            if fmap.doctype is None:
                problems.append(f"{where}: table {name!r} needs 'doctype' and row 'fields'")
            else:
                problems += _check_field_maps(
                    f"{where}: table {name!r}", field.fields, fmap.fields, partial=partial
                )
        elif fmap.doctype is not None:
            problems.append(f"{where}: field {name!r} is {field.type}, not a table")
        problems += _check_values(f"{where}: field {name!r}", field.values, fmap.values)
    return problems


def _check_values(where: str, canonical: tuple[str, ...], mapped: Mapping[str, str]) -> list[str]:
    if not mapped:
        return []
    if not canonical:
        return [f"{where}: maps values but is not an enum"]
    problems = [f"{where}: maps unknown value {v!r}" for v in mapped if v not in canonical]
    missing = ", ".join(repr(v) for v in canonical if v not in mapped)
    if missing:
        # A partial value map is almost always a typo; make it explicit.
        problems.append(f"{where}: values {missing} are not mapped (map every value or none)")
    return problems


def _check_report_map(catalog: Catalog, rmap: ReportMap) -> list[str]:
    where = f"{rmap.source}: report map {rmap.report!r}"
    report = catalog.reports.get(rmap.report)
    if report is None:
        return [f"{where}: unknown report {rmap.report!r}"]
    problems = []
    if report.module in catalog.modules and _file_module(rmap.source) != report.module:
        problems.append(f"{where}: belongs in the {report.module!r} file (its module)")
    problems += [
        f"{where}: maps {n!r}, which the report does not have"
        for n in rmap.params
        if n not in report.params
    ]
    for name, param in report.params.items():
        pmap = rmap.params.get(name)
        if pmap is None:
            problems.append(f"{where}: parameter {name!r} has no native filter")
            continue
        problems += _check_values(f"{where}: parameter {name!r}", param.values, pmap.values)
        if pmap.transform is Transform.JOIN and param.type is not ParamType.LIST:
            problems.append(f"{where}: parameter {name!r}: 'join' is for lists, not {param.type}")
        if pmap.transform is Transform.BOOL_INT and param.type is not ParamType.BOOLEAN:
            problems.append(
                f"{where}: parameter {name!r}: 'bool_int' is for booleans, not {param.type}"
            )
    return problems
