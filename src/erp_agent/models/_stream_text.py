"""Streamed text held back where it may be a tool call written as text.

A model that writes its tool call in the content would otherwise stream raw JSON to the user
before the call is recognised at the end. Text before the first possible call marker is shown
as it comes; from the marker on it waits for the whole answer.
"""

from __future__ import annotations

from erp_agent.models._text_calls import MARKERS
from erp_agent.models.base import Completion


class TextGate:
    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.shown = ""
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of ``text`` that can be shown now."""
        if not self.enabled:
            self.shown += text
            return text
        self._held += text
        if not self.shown and self._held.lstrip()[:1] in ("{", "["):
            return ""  # a bare JSON object or list: possibly a call
        cut = _first_marker(self._held)
        if cut is None:
            cut = len(self._held) - _partial_marker(self._held)
        out, self._held = self._held[:cut], self._held[cut:]
        self.shown += out
        return out

    def rest(self, completion: Completion) -> str:
        """What is still to show once the answer is complete: nothing when it was a tool call;
        else the final answer past what was shown (it may be the answer to a second request)."""
        if not self.enabled or completion.tool_calls:
            return ""
        final = completion.content or ""
        if final.startswith(self.shown):
            return final[len(self.shown) :]
        return f"\n\n{final}" if final else ""


def _first_marker(text: str) -> int | None:
    found = [i for i in (text.find(m) for m in MARKERS) if i >= 0]
    return min(found) if found else None


def _partial_marker(text: str) -> int:
    """Length of a tail of ``text`` that could be the start of a marker (``<tool_`` …)."""
    for size in range(min(len(text), max(map(len, MARKERS)) - 1), 0, -1):
        tail = text[-size:]
        if any(m.startswith(tail) for m in MARKERS):
            return size
    return 0
