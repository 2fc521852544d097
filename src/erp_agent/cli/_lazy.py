"""A command group that imports a command's module only when that command runs.

`erp-agent --help` lists every command from the short help declared here, so it starts in the
time Typer itself takes; `erp-agent ask` imports what asking needs and nothing for `serve` or
`demo-erp`. tests/erp_agent/test_cli_start.py keeps the declared help equal to each command's own.
"""

from __future__ import annotations

import gc
import importlib
from dataclasses import dataclass
from gettext import gettext as _
from typing import ClassVar

import typer
from typer import _click as click  # Typer's own copy of Click: the types TyperGroup uses
from typer.core import TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    name: str
    target: str  # "module:attribute" — a command function or a Typer app
    short_help: str

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        # A command's imports allocate hundreds of thousands of objects that live as long as the
        # process; the cyclic collector would walk them again and again while they load, and
        # once more at its next full pass (together a sixth of `erp-agent ask`'s CPU). So no
        # collection while they load, and they are kept out of every later one (the little
        # cyclic garbage an import leaves stays with them).
        gc.disable()
        try:
            found = getattr(importlib.import_module(module), attribute)
        finally:
            gc.enable()
            _freeze_once()
        if isinstance(found, typer.Typer):
            command: click.Command = typer.main.get_group(found)
        else:
            single = typer.Typer(add_completion=False, rich_markup_mode=None)
            single.command(name=self.name)(found)
            command = typer.main.get_command(single)
        command.name = self.name
        return command


_FROZEN: list[bool] = []


def _freeze_once() -> None:
    """The first command's imports leave the collector's view (once: a process that loads
    several commands, such as a test run, keeps collecting what it makes afterwards)."""
    if not _FROZEN:
        gc.freeze()
        _FROZEN.append(True)


class LazyGroup(TyperGroup):
    """A TyperGroup whose commands come from ``lazy_commands``, loaded on first use."""

    lazy_commands: ClassVar[dict[str, LazyCommand]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [
            *self.lazy_commands,
            *(n for n in super().list_commands(ctx) if n not in self.lazy_commands),
        ]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.commands[cmd_name] = self.lazy_commands[cmd_name].load()
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The declared short help, so listing commands imports none of them.
        rows = [(c.name, c.short_help) for c in self.lazy_commands.values()]
        with formatter.section(_("Commands")):
            formatter.write_dl(rows)


def lazy_group(commands: list[LazyCommand]) -> type[LazyGroup]:
    """A LazyGroup class holding ``commands`` (Typer takes the class, not an instance)."""
    return type("ErpAgentGroup", (LazyGroup,), {"lazy_commands": {c.name: c for c in commands}})
