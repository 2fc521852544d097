"""results.*: page, sort and export a stored result by its id — only its owner can.

The rows come from the result store (``ToolContext.results``), never from the model.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.errors import ToolInputError
from erp_agent.results.export import (
    FORMATS,
    PDF_MAX_ROWS,
    export_block,
    export_result,
    export_title,
)
from erp_agent.results.store import (
    MAX_PAGE,
    PAGE_SIZE,
    ExportRecord,
    ResultRecord,
    ResultStore,
    page_of,
    tabulate,
)
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


def _export(directory: Path, keep_days: int) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        result_id, fmt = str(args["result_id"]), str(args["format"])
        data = await _data(ctx, result_id)  # the owner's, or refused
        index = ctx.results if isinstance(ctx.results, ResultStore) else None
        stored = await index.fetch_stored(result_id, ctx.session.user) if index else None
        # Named after what it holds ("Accounts Receivable – Gulf Traders – 2026-11-30"),
        # never after its id.
        today = ctx.today or dt.date.today()
        title = args.get("title") or export_title(
            data, stored.tool if stored else "", ctx.catalog, today
        )
        record = ResultRecord(result_id, ctx.session.user, "", data, title=title)
        now = dt.datetime.now(dt.UTC)
        if index is not None and not args.get("title"):
            # Exported before, by this owner, on any worker: the same file, if it is here.
            found = await index.find_export(ctx.session.user, result_id, fmt)
            if found is not None and not found.expired(now) and Path(found.path).is_file():
                return {"block": export_block(record, fmt, Path(found.path), found.size)}
        # Each user's exports in their own folder, so a file path never crosses users.
        folder = user_folder(directory, ctx.session.user)
        block = export_result(record, fmt, folder)
        if index is not None:
            # Indexed in the store: any worker finds it for its owner, and the purge and the
            # deletion of a user's data find its file.
            await index.add_export(
                ExportRecord(
                    result_id=result_id,
                    format=fmt,
                    user=ctx.session.user,
                    path=str(block["path"]),
                    name=str(block["name"]),
                    mime=str(block["mime"]),
                    size=int(block["size"]),
                    created_at=now,
                    expires_at=now + dt.timedelta(days=keep_days) if keep_days > 0 else None,
                )
            )
        return {"block": block}

    return run


def user_folder(directory: Path, user: str) -> Path:
    """The folder of ``user``'s exports under ``directory``."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in user) or "user"
    return directory / safe


def tools(catalog: Catalog, *, export_dir: Path | None = None, export_days: int = 7) -> list[Tool]:
    """``results.page`` and ``results.export``; exports are written under ``export_dir``
    (default: a folder in the system's temporary directory) and expire after ``export_days``
    (0: kept until their owner's data is deleted)."""
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
            run=_export(directory, export_days),
            action="export",
            shape=Shape.DISPLAY,
        ),
    ]
