"""results.*: page, sort and export a stored result by its id — only its owner can.

The rows come from the result store (``ToolContext.results``), never from the model.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.errors import ToolInputError
from erp_agent.results.export import FORMATS, PDF_MAX_ROWS, export_result
from erp_agent.results.store import MAX_PAGE, PAGE_SIZE, ResultRecord, page_of, tabulate
from erp_agent.tools.base import Args, Effect, ReadHandler, Shape, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj

MODULE = "results"
RESULT_ID = {"type": "string", "pattern": "^res_", "description": "The result_id a tool returned."}


async def _data(ctx: ToolContext, result_id: str) -> Any:
    if ctx.results is None:
        raise ToolInputError("Results are not kept in this session.")
    data = await ctx.results.fetch(result_id, ctx.session.user)
    if data is None:
        # The same words whether the result is someone else's or does not exist.
        raise ToolInputError(f"There is no result {result_id} of yours.")
    return data


async def page(ctx: ToolContext, args: Args) -> dict[str, Any]:
    data = await _data(ctx, args["result_id"])
    out = page_of(
        tabulate(data),
        start=int(args.get("start", 0)),
        limit=int(args.get("limit", PAGE_SIZE)),
        sort_by=args.get("sort_by"),
        descending=bool(args.get("descending", False)),
    )
    return {"result_id": args["result_id"], **out}


def _title(data: Any, result_id: str) -> str:
    if isinstance(data, dict):
        for key in ("title", "report", "analysis", "entity"):
            if isinstance(data.get(key), str) and data[key]:
                return str(data[key]).replace("_", " ").capitalize()
    return f"Result {result_id}"


def _export(directory: Path) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        result_id = str(args["result_id"])
        data = await _data(ctx, result_id)
        record = ResultRecord(
            result_id,
            ctx.session.user,
            "",
            data,
            title=args.get("title") or _title(data, result_id),
        )
        # Each user's exports in their own folder, so a file path never crosses users.
        folder = directory / _safe(ctx.session.user)
        return {"block": export_result(record, str(args["format"]), folder)}

    return run


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "user"


def tools(catalog: Catalog, *, export_dir: Path | None = None) -> list[Tool]:
    """``results.page`` and ``results.export``; exports are written under ``export_dir``
    (default: a folder in the system's temporary directory)."""
    directory = export_dir or Path(tempfile.gettempdir()) / "erp-agent-exports"
    page_handler: ReadHandler = page
    return [
        Tool(
            name="results.page",
            description=(
                "Another page of a stored result, optionally sorted by one of its columns. Use "
                "for 'show more', 'sort by amount', 'the largest ten'. Returns rows, total_rows "
                "and has_more. Totals come from the result's summary, not from adding rows."
            ),
            parameters=obj(
                {
                    "result_id": RESULT_ID,
                    "start": {"type": "integer", "minimum": 0, "default": 0},
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_PAGE,
                        "default": PAGE_SIZE,
                    },
                    "sort_by": {"type": "string", "minLength": 1, "description": "A column."},
                    "descending": {"type": "boolean", "default": False},
                },
                ["result_id"],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=page_handler,
            action="page",
        ),
        Tool(
            name="results.export",
            description=(
                "Export a stored result as a file for the user: csv, xlsx (numbers as numbers, "
                "bold header) or pdf (title, chart when the result has one, and the table; the "
                f"first {PDF_MAX_ROWS:,} rows of larger results). Returns a file block to show."
            ),
            parameters=obj(
                {
                    "result_id": RESULT_ID,
                    "format": {"type": "string", "enum": list(FORMATS)},
                    "title": {"type": "string", "maxLength": 120},
                },
                ["result_id", "format"],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=_export(directory),
            action="export",
            shape=Shape.DISPLAY,
        ),
    ]
