"""The compact field syntax of the catalog data files.

A field or report parameter may be written as one string::

    "<type>[(<arg>)] [flag ...] [-- description]"

e.g. ``"link(customer) req filter group -- The billed customer"`` or
``"enum(Draft|Paid|Overdue) ro filter"``. The mapping form ``{spec: "...", label: ..., ...}`` adds
what a line cannot hold. This module only splits the text; the models decide what is valid.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TYPE = re.compile(r"[a-z_]+")


def split_type(text: str) -> tuple[str, str | None, str]:
    """Split ``"list(link(customer)) req"`` into ``("list", "link(customer)", " req")``."""
    text = text.strip()
    match = _TYPE.match(text)
    if match is None:
        raise ValueError(f"spec {text!r} must start with a type name")
    kind, rest = match.group(), text[match.end() :]
    if not rest.startswith("("):
        return kind, None, rest
    depth = 0
    for i, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return kind, rest[1:i], rest[i + 1 :]
    raise ValueError(f"spec {text!r} has an unclosed '('")


def named(children: object) -> object:
    """``{key: declaration}`` -> ``{key: {"name": key, ...}}`` so each model knows its own name."""
    if not isinstance(children, Mapping):
        return children
    return {
        key: {"spec": value, "name": key}
        if isinstance(value, str)
        else {**value, "name": key}
        if isinstance(value, Mapping)
        else value
        for key, value in children.items()
    }


def expand(raw: object, flag_fields: Mapping[str, str]) -> object:
    """Turn a compact or mapping-form declaration into keyword data for a model.

    ``flag_fields`` maps flag words (``req``) to the boolean attributes they set (``required``).
    Anything that is not a string or a mapping is returned unchanged for the model to reject.
    """
    if isinstance(raw, str):
        data: dict[str, Any] = {"spec": raw}
    elif isinstance(raw, Mapping):
        data = dict(raw)
    else:
        return raw
    spec = data.pop("spec", None)
    if spec is None:
        return data
    if not isinstance(spec, str):
        raise ValueError(f"spec must be a string, not {type(spec).__name__}")
    head, _, description = spec.partition(" -- ")
    kind, arg, rest = split_type(head)
    data.setdefault("type", kind)
    if arg is not None:
        data["_arg"] = arg
    for flag in rest.split():
        if flag not in flag_fields:
            known = ", ".join(sorted(flag_fields))
            raise ValueError(f"unknown flag {flag!r} (known: {known})")
        data[flag_fields[flag]] = True
    if description.strip():
        data.setdefault("description", description.strip())
    return data


_ACRONYMS = {"id": "ID", "uom": "UOM", "po": "PO", "ctc": "CTC", "gl": "GL"}


def default_label(name: str) -> str:
    """``due_date`` -> ``Due date``; ``customer_po`` -> ``Customer PO``; ``per_billed`` -> ``% billed``."""
    words = [_ACRONYMS.get(w, w) for w in name.split("_")]
    if words[0] == "per" and len(words) > 1:
        words[0] = "%"
    first = words[0] if words[0] in _ACRONYMS.values() else words[0].capitalize()
    return " ".join([first, *words[1:]])
