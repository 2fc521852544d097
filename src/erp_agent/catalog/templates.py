"""Plain ``{field}`` templates for fact cards and document links.

Only bare names are allowed (no ``{a.b}``, ``{a[0]}``, ``{a:>8}``, ``{a!r}``): templates are data
written by people, and a format mini-language would let them reach attributes or fail at render
time on values the validator never saw.
"""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Mapping
from decimal import Decimal

MISSING = "n/a"

_FORMATTER = string.Formatter()


def placeholders(template: str) -> tuple[str, ...]:
    """The names a template uses, in order; ``ValueError`` on anything but ``{name}``."""
    names: list[str] = []
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:  # unbalanced braces
        raise ValueError(f"template {template!r} is malformed: {exc}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(
                f"template {template!r} uses {{{name}{'!' + conversion if conversion else ''}"
                f"{':' + spec if spec else ''}}}; only plain {{field}} placeholders are allowed"
            )
        names.append(name)
    return tuple(names)


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill a template from already formatted text; absent names render as ``n/a``."""
    return template.format_map({name: values.get(name, MISSING) for name in placeholders(template)})


def format_value(value: object, kind: str) -> str:
    """Text for one canonical value of the given field type, as a sentence would show it."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "boolean" and isinstance(value, int):
        return "yes" if value else "no"
    if kind == "money" and isinstance(value, int | float | Decimal):
        return f"{value:,.2f}"
    if kind == "percent" and isinstance(value, int | float | Decimal):
        return f"{_plain(value)}%"
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, float | Decimal):
        return _plain(value)
    return str(value)


def _plain(number: int | float | Decimal) -> str:
    """12.5 -> "12.5", 1234567.0 -> "1,234,567": no float noise, no exponent."""
    return f"{number:,.4f}".rstrip("0").rstrip(".")
