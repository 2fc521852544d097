"""The canonical document lifecycle, and how one ERP's native states map onto it.

Every transaction goes draft → booked → cancelled (data/common.yaml ``lifecycle:``). Business
figures count booked documents only. Canonically a state is carried as a small code in the
record's ``field`` (``docstatus``: 0 draft, 1 booked, 2 cancelled), the code ERPNext stores
itself; any other system maps its own states onto these, many to one (Tryton's invoice
``draft`` and ``validated`` are both "draft"; ``posted`` and ``paid`` both "booked"). The native
state is kept beside the canonical code, so an intermediate state is never lost to the user.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self

from pydantic import Field as PydanticField
from pydantic import JsonValue, model_validator

from erp_agent.catalog._base import Frozen

DRAFT, BOOKED, CANCELLED = "draft", "booked", "cancelled"


class LifecycleState(Frozen):
    """One canonical state: its code in the canonical field, label and meaning."""

    code: int
    label: str
    description: str = ""


class Lifecycle(Frozen):
    """The canonical states of a document entity and which of them business figures count."""

    field: str = "docstatus"
    states: dict[str, LifecycleState]
    counts: str = BOOKED  # the state "booked documents only" means

    @model_validator(mode="after")
    def _check(self) -> Self:
        codes = [s.code for s in self.states.values()]
        if len(set(codes)) != len(codes):
            raise ValueError("two lifecycle states share a code")
        if self.counts not in self.states:
            raise ValueError(f"counts: {self.counts!r} is not one of the states")
        return self

    def code(self, state: str) -> int:
        return self.states[state].code

    def state_of(self, code: object) -> str | None:
        """The canonical state whose code is ``code`` (None for an unknown code)."""
        return next((n for n, s in self.states.items() if s.code == code), None)

    @property
    def booked(self) -> int:
        """The code of the state business figures count."""
        return self.code(self.counts)

    def is_state(self, code: object, state: str) -> bool:
        return state in self.states and code == self.states[state].code


class LifecycleMap(Frozen):
    """How one ERP stores the lifecycle of one entity: the native ``field`` and, for each
    canonical state, the native values that mean it (many to one). ``buttons`` name the
    native actions that move a document (``submit: post``); ``native_labels`` the system's
    own words for the native values, when they differ from the values themselves."""

    field: str
    states: dict[str, tuple[JsonValue, ...]]
    buttons: dict[str, str] = PydanticField(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> Self:
        seen: set[str] = set()
        for values in self.states.values():
            for value in values:
                key = repr(value)
                if key in seen:
                    raise ValueError(f"native state {value!r} maps to two canonical states")
                seen.add(key)
        return self

    def canonical(self, lifecycle: Lifecycle, native: object) -> int | None:
        """The canonical code of a native state (None when the map does not know it)."""
        for state, values in self.states.items():
            if native in values and state in lifecycle.states:
                return lifecycle.code(state)
        return None

    def native(self, lifecycle: Lifecycle, codes: Iterable[object]) -> list[JsonValue]:
        """Every native value that means one of the canonical ``codes``."""
        wanted = {lifecycle.state_of(c) for c in codes}
        return [v for state, values in self.states.items() if state in wanted for v in values]

    def problems(self, lifecycle: Lifecycle) -> list[str]:
        """What does not fit the entity's canonical lifecycle (empty when it fits)."""
        out = [
            f"maps unknown lifecycle state {s!r}" for s in self.states if s not in lifecycle.states
        ]
        out += [f"lifecycle state {s!r} has no native state" for s in lifecycle.states
                if not self.states.get(s)]  # fmt: skip
        return out
