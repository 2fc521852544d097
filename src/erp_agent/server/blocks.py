"""Blocks as the browser gets them: a file block carries a download URL, not a server path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from erp_agent.results.blocks import Block


def for_web(blocks: Sequence[Block]) -> list[Block]:
    out: list[Block] = []
    for block in blocks:
        if block["type"] == "file" and block.get("path"):
            # Exports are written as <result_id>.<format>; the export route serves them again,
            # checking the owner, so the browser never learns where files live.
            path = PurePath(str(block["path"]))
            block = block.copy()
            del block["path"]
            # Relative to the web app (no leading /): it resolves under any root path.
            block["url"] = f"api/results/{path.stem}/export?format={path.suffix.lstrip('.')}"
        out.append(block)
    return out
