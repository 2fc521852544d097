"""The base of every catalog model: immutable, and strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen pydantic model that rejects keys it does not declare (typos in data files)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
