"""Tool names on the wire.

Our tools are named ``<entity>.<action>``, but OpenAI and Anthropic accept only
``^[a-zA-Z0-9_-]{1,64}$`` as a function name. Adapters send an encoded name and decode the name
the model calls back with, using the tools offered in the same request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def encode(name: str) -> str:
    if WIRE_NAME.match(name):
        return name
    return _INVALID.sub("_", name.replace(".", "__"))[:64]


class NameMap:
    """Wire name ↔ our name for one request."""

    def __init__(self, names: Iterable[str]) -> None:
        self._back: dict[str, str] = {}
        for name in names:
            self._back.setdefault(encode(name), name)

    def decode(self, wire: str) -> str:
        # An unknown name stays as the model sent it: the gateway then refuses it by name.
        return self._back.get(wire, wire)
