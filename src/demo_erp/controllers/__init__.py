"""DocType controllers: the domain rules ERPNext runs at validate, submit and cancel.

Each controller subclasses ``Controller`` and is registered for its DocType with ``@register``.
Modules in this package register themselves when imported (see ``_load``).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from demo_erp.context import Ctx

Doc = dict[str, Any]


class Controller:
    """Hooks a DocType may override. The defaults do nothing."""

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        """Before every save of a draft and before submit: compute totals, defaults, checks."""

    def after_insert(self, ctx: Ctx, doc: Doc) -> None:
        """After the first write."""

    def before_submit(self, ctx: Ctx, doc: Doc) -> None:
        """Checks that only apply when submitting (e.g. leave status)."""

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        """Post ledgers, update linked documents; may set fields on ``doc`` before it is written."""

    def after_submit(self, ctx: Ctx, doc: Doc) -> None:
        """After the submitted document is written."""

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        """Reverse what on_submit did; may set fields on ``doc`` (e.g. status)."""

    def on_update_after_submit(self, ctx: Ctx, old: Doc, new: Doc) -> None:
        """A submitted document's allow-on-submit fields changed."""


_REGISTRY: dict[str, Controller] = {}
_DEFAULT = Controller()
_loaded = False
_load_lock = threading.RLock()


def register(*doctypes: str) -> Any:
    def wrap(cls: type[Controller]) -> type[Controller]:
        for doctype in doctypes:
            _REGISTRY[doctype] = cls()
        return cls

    return wrap


def _load() -> None:
    global _loaded
    # Several request threads may ask at once: import under a lock, flag only when done.
    with _load_lock:
        if _loaded:
            return
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def controller_for(doctype: str) -> Controller:
    _load()
    return _REGISTRY.get(doctype, _DEFAULT)
