"""One line of `erp-agent doctor`: a check's name, its status and what it found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "warn", "FAIL"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
