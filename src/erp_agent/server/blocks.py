"""Blocks as the browser gets them: a file block carries a download URL, not a server path."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any


def for_web(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for block in blocks:
        if block.get("type") == "file" and block.get("path"):
            # Exports are written as <result_id>.<format>; the export route serves them again,
            # checking the owner, so the browser never learns where files live.
            path = PurePath(str(block["path"]))
            block = {k: v for k, v in block.items() if k != "path"}
            # Relative to the web app (no leading /): it resolves under any root path.
            block["url"] = f"api/results/{path.stem}/export?format={path.suffix.lstrip('.')}"
        out.append(block)
    return out
