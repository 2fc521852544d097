"""What the subscription tables hold, as plain dataclasses."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict

from erp_agent.store.records import utcnow

DELIVERY_CHANNELS = ("inbox", "email", "erp")


class Call(TypedDict):
    """One tool call of a reading, exactly as the gateway runs it."""

    tool: str
    args: dict[str, Any]


class Ref(TypedDict):
    """A record a reading names (a customer in a filter): it must still exist at run time."""

    entity: str
    id: str


class Reading(TypedDict, total=False):
    calls: list[Call]
    refs: list[Ref]


class Condition(TypedDict, total=False):
    """When an alert is delivered: the figure (``on``: value, the default, or rows listed)
    compared with ``value``. Delivered when it becomes true, not again while it stays true."""

    on: str
    op: str
    value: float


class Status(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class Outcome(StrEnum):
    """How a subscription's last run ended."""

    NEW = ""
    DELIVERED = "delivered"
    QUIET = "quiet"  # an alert whose condition is not (newly) met: nothing to send
    NO_ACCESS = "no_access"  # the user may not read it any more: nothing sent, said so
    NO_CREDENTIAL = "no_credential"  # nothing to run as while the user is away
    UNREADABLE = "unreadable"  # the reading no longer reads (a record gone): paused
    ERROR = "error"  # the ERP down or failing: tried again at the next run


@dataclass
class Subscription:
    id: str
    user: str
    org: str
    title: str
    question: str
    reading: Reading
    schedule: str  # cron, five fields
    timezone: str = "UTC"
    condition: Condition | None = None
    channels: list[str] = field(default_factory=lambda: ["inbox"])
    status: Status = Status.ACTIVE
    status_message: str = ""
    conversation_id: str | None = None
    created_at: dt.datetime = field(default_factory=utcnow)
    updated_at: dt.datetime = field(default_factory=utcnow)
    next_run_at: dt.datetime | None = None
    last_run_at: dt.datetime | None = None
    last_outcome: Outcome = Outcome.NEW
    last_value: dict[str, Any] | None = None
    condition_met: bool = False
    failures: int = 0  # runs in a row that ended in ERROR

    @property
    def kind(self) -> str:
        return "alert" if self.condition else "digest"


class DeliveryStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


@dataclass
class Delivery:
    """One email or ERP notification of a run, tried until sent or given up."""

    id: str
    subscription_id: str
    user: str
    channel: str
    message: dict[str, Any]
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    next_attempt_at: dt.datetime | None = None
    last_error: str | None = None
    reference: str | None = None  # the ERP's ToDo, the email's Message-ID
    created_at: dt.datetime = field(default_factory=utcnow)
    sent_at: dt.datetime | None = None


@dataclass
class InboxItem:
    id: str
    user: str
    title: str
    body: str
    kind: str = "delivery"  # delivery | notice
    subscription_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # figures, definition, link
    created_at: dt.datetime = field(default_factory=utcnow)
    read_at: dt.datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "subscription_id": self.subscription_id,
            "title": self.title,
            "body": self.body,
            "data": self.data,
            "created_at": self.created_at.isoformat(),
            "read": self.read_at is not None,
        }
