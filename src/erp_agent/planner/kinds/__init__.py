"""The handlers of the question kinds and plans declared in ``catalog/data/questions.yaml``:
one module per handler, each with ``handle(ctx) -> Step | None`` (and, for a plan whose
condition is ``applies``, ``applies(ctx) -> bool``). Handlers import the steps module and the
step builders, never each other: one hands a request over with ``steps.hand_over(kind)``."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import cast

from erp_agent.planner.steps import Ctx, Step

Handle = Callable[[Ctx], Step | None]


@functools.cache
def module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def handler(name: str) -> Handle:
    return cast(Handle, module(name).handle)


def applies(name: str) -> Callable[[Ctx], bool]:
    return cast(Callable[[Ctx], bool], module(name).applies)
