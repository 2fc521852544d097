"""The settings reference in docs/configuration.md, generated from erp_agent.config.

The page is hand-written prose around generated blocks between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``. Regenerate after adding or changing a setting::

    python -m erp_agent.config_doc          # rewrites the blocks in docs/configuration.md
"""

from __future__ import annotations

import json
import re
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from erp_agent.config import ENV_PREFIX, Group, ModelSettings, Settings, env_names

BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n).*?(<!-- end generated -->)", re.S)


class Row(BaseModel):
    """One setting as the reference shows it."""

    variables: list[str]
    toml_key: str
    kind: str
    default: str
    description: str
    secret: bool


def _args(annotation: Any) -> tuple[Any, ...]:
    return typing.get_args(annotation)


def _without_none(annotation: Any) -> Any:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in _args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _kind(annotation: Any) -> str:
    inner = _without_none(annotation)
    if typing.get_origin(inner) is Literal:
        return "one of " + ", ".join(f"`{a}`" for a in _args(inner))
    names = {
        bool: "true/false",
        int: "integer",
        float: "number",
        str: "text",
        SecretStr: "secret",
    }
    if inner in names:
        return names[inner]
    if inner is ModelSettings:
        return "model table (below)"
    origin = typing.get_origin(inner)
    if origin in (list, tuple, set, frozenset):
        return "list"
    if origin is dict:
        return "table"
    return getattr(inner, "__name__", str(inner)).replace("date", "date (YYYY-MM-DD)")


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value: Any = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list | dict | tuple):
        return f"`{json.dumps(value)}`" if value else "empty"
    return f"`{value}`"


def _row(variables: list[str], toml_key: str, info: FieldInfo) -> Row:
    return Row(
        variables=variables,
        toml_key=toml_key,
        kind=_kind(info.annotation),
        default=_default(info),
        description=" ".join((info.description or "").split()),
        secret=_without_none(info.annotation) is SecretStr,
    )


def rows() -> Iterator[tuple[str, list[Row]]]:
    """The settings by section: the top-level ones first, then each group."""
    top: list[Row] = []
    for name, info in Settings.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, Group):
            continue
        top.append(_row([f"{ENV_PREFIX}{name}".upper()], name, info))
    yield "General", top
    for name, info in Settings.model_fields.items():
        kind = info.annotation
        if not (isinstance(kind, type) and issubclass(kind, Group)):
            continue
        yield (
            kind.title or name,
            [
                _row(env_names(name, field), f"{name}.{field}", sub)
                for field, sub in kind.model_fields.items()
            ],
        )


def model_rows() -> list[Row]:
    return [
        _row([f"{ENV_PREFIX}<TASK>_MODEL__{field}".upper()], f"<task>_model.{field}", info)
        for field, info in ModelSettings.model_fields.items()
    ]


def _table(entries: list[Row]) -> list[str]:
    out = ["| variable | TOML key | type | default | effect |", "|---|---|---|---|---|"]
    for r in entries:
        names = "<br>".join(f"`{v}`" for v in r.variables)
        kind = r.kind + (" (secret)" if r.secret and r.kind != "secret" else "")
        cells = [names, f"`{r.toml_key}`", kind, r.default, r.description.replace("|", "\\|")]
        out.append("| " + " | ".join(cells) + " |")
    return out


def render_block(name: str) -> str:
    out: list[str] = []
    if name == "settings":
        for title, entries in rows():
            out += [f"### {title}", "", *_table(entries), ""]
    elif name == "model-settings":
        out += [*_table(model_rows()), ""]
    else:
        raise ValueError(f"no generated block named {name!r}")
    return "\n".join(out)


def render(page: str) -> str:
    """``page`` with every generated block brought up to date."""

    def fill(match: re.Match[str]) -> str:
        return match.group(1) + "\n" + render_block(match.group("name")) + "\n" + match.group(3)

    return BLOCK.sub(fill, page)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path("docs/configuration.md")
    page = path.read_text(encoding="utf-8")
    path.write_text(render(page), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
