"""An answer's text as every channel shows it (markdown in the web app, the terminal, MCP and
the OpenAI-compatible API).

A line written straight after a list ("Counted: submitted … only") would be read by markdown
as the end of the list's last item and shown glued to it; it is its own paragraph."""

from __future__ import annotations

import re

_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")


def separate_lists(text: str) -> str:
    """A blank line between a list and a line after it that is no item of it."""
    out: list[str] = []
    in_list = fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            if _ITEM.match(line):
                in_list = True
            elif not line.strip():
                in_list = False
            elif in_list and not line.startswith((" ", "\t")):
                out.append("")
                in_list = False
        out.append(line)
    return "\n".join(out)
