"""Charts of stored results, the same on every channel (and told back to the model that asked
for one): one chart per currency, its title naming that currency once; the top N asked for are
exactly N entities, and a result's "All others" row is drawn only when asked, as its own bar
after them, never ranked among them. A chart's values are the table's values."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from erp_agent.catalog import Catalog
from erp_agent.metrics.drill import drillable, row_refs
from erp_agent.results import presentation
from erp_agent.results.blocks import ChartBlock, ChartDataset, ChartDrawing, DrawnChart
from erp_agent.results.presentation import Column

OTHERS_COLOUR = "#9aa3ad"  # the rest, summed: grey beside the entities' own colour
BAR_COLOUR = "#1f5fae"
DRAWN_POINTS = 60  # points per series told back to the model; the chart itself draws all


class _Drills(TypedDict, total=False):
    drills: list[str | None]  # each bar's drill-down reference


class Series(TypedDict):
    name: str
    values: list[Any]


class Told(TypedDict):
    """One chart as told back to the model that asked for it (``drawn``)."""

    title: str
    currency: str | None
    labels: list[Any]
    series: list[Series]
    more_points: NotRequired[int]  # how many labels past the ones told
    others: NotRequired[str]  # the last bar is all the others


def is_others(row: dict[str, Any]) -> bool:
    """The row summing everything after the top N (metrics.query's ``others``)."""
    return row.get("others") is True


def draw(
    block: ChartBlock,
    data: Any,
    rows: list[dict[str, Any]],
    catalog: Catalog | None = None,
    entity: str | None = None,
    result_id: str | None = None,
) -> ChartDrawing:
    """The chart fields of a display block: ``chart_type``, ``spec`` (the first chart) and
    ``charts`` (one per currency, each ``{currency, title, spec, others}``, and with the stored
    ``result_id`` given, ``drills``: each bar's drill-down reference, or None)."""
    label, values = block["label"], list(block["values"])
    info = presentation.columns_of(data, rows, catalog, entity)
    definition = data.get("definition") if isinstance(data, dict) else None
    year = presentation.year_of(definition)
    entities = [r for r in rows if not is_others(r)]
    rest = [r for r in rows if is_others(r)] if block.get("others") else []
    if block.get("top"):
        entities = presentation.top_rows(entities, values[0], int(block["top"]))
    chart_type = block.get("chart_type") or (
        "line" if presentation.is_time_series(info.get(label)) else "bar"
    )
    title = presentation.without_currency(
        str(block.get("title") or ""), presentation.currencies(rows)
    )
    charts: list[DrawnChart] = []
    groups = presentation.by_currency(entities)
    for currency, group in groups:
        extra = [r for r in rest if len(groups) == 1 or r.get("currency") == currency]
        bars = [*group, *extra]
        colours: list[str] = []
        if extra and chart_type == "bar":
            colours = [BAR_COLOUR] * len(group) + [OTHERS_COLOUR] * len(extra)
        drills: _Drills = {}
        if result_id is not None and drillable(data):
            drills["drills"] = row_refs(result_id, data, bars)
        charts.append({
            **drills,
            "currency": currency,
            # Rows that carry a currency are charted per currency: the title says which.
            "title": presentation.with_currency(title, currency).strip(),
            "others": bool(extra),
            "spec": {
                "type": chart_type,
                "data": {
                    "labels": [_cell(info, r, label, year) for r in bars],
                    "datasets": [_dataset(info, v, bars, year, colours) for v in values],
                },
            },
        })  # fmt: skip
    return {"chart_type": chart_type, "spec": charts[0]["spec"], "charts": charts}


def _dataset(
    info: dict[str, Column],
    key: str,
    bars: list[dict[str, Any]],
    year: int | None,
    colours: list[str],
) -> ChartDataset:
    dataset: ChartDataset = {
        "label": _series(info, key),
        "data": [_cell(info, r, key, year) for r in bars],
    }
    if colours:
        dataset["backgroundColor"] = colours
    return dataset


def drawn(chart: ChartDrawing | ChartBlock, limit: int = DRAWN_POINTS) -> list[Told]:
    """What a chart block shows, for the model to check: per chart its title, currency,
    labels and each series' values (the last label is "All others" when that bar is drawn);
    a long series is told by its first ``limit`` points and how many more there are."""
    out = []
    for one in chart.get("charts") or []:
        data = one["spec"]["data"]
        labels = list(data["labels"])
        told: Told = {
            "title": one["title"],
            "currency": one["currency"],
            "labels": labels[:limit],
            "series": [{"name": d["label"], "values": d["data"][:limit]} for d in data["datasets"]],
        }
        if len(labels) > limit:
            told["more_points"] = len(labels) - limit
        if one.get("others"):
            told["others"] = "the last bar is all the others, summed"
        out.append(told)
    return out


def _cell(info: dict[str, Column], row: dict[str, Any], key: str, year: int | None) -> Any:
    column = info.get(key)
    return presentation.shown(row.get(key), column, row, year) if column else row.get(key)


def _series(info: dict[str, Column], key: str) -> str:
    """A series is named as the table's column is (its values are that column's)."""
    column = info.get(key)
    return column.label if column else key
