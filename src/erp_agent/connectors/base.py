"""The Connector interface: a small core every system of record implements, plus optional
capabilities a connector declares in its profile.

Core (abstract): sign-in and identity (``login``, ``roles``), ``describe``, ``list``, ``get``,
``count``, ``aggregate``, ``access`` and ``link``. Capabilities (overridden only by connectors
that declare them in ``profile``): the document lifecycle (create, update, submit, cancel,
delete, version, created_by, create markers), workflows, native reports and delta sync. Tool
factories read the profile, so no tool is generated for what the active connector cannot do;
calling a capability a connector lacks raises ``CapabilityMissing``.

Every data operation takes the signed-in user's credential, so the system's own permissions
and scope apply by themselves. The credential is opaque outside the connector that issued it.
A service credential (when one is configured) is used only for role lookup and metadata.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from erp_agent.catalog.entities import Report
from erp_agent.catalog.maps import ConnectorMaps
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.query import AggregateRequest, AggregateResult, Filter
from erp_agent.connectors.scope import DataScope
from erp_agent.errors import ConfigError, ErpAuthenticationError

Record = dict[str, Any]

# The operations every connector serves (the core read protocol).
READ_OPERATIONS = frozenset({"list", "get", "count", "aggregate"})


_STATE_WORDS = {0: "draft", 1: "submitted", 2: "cancelled"}  # docstatus, canonically


class Capability(StrEnum):
    """What a connector may offer beyond the core read protocol."""

    WRITES = "writes"  # create / update of records (each a confirmed proposal)
    LIFECYCLE = (
        "lifecycle"  # submit / cancel / delete of documents (draft -> submitted -> cancelled)
    )
    WORKFLOWS = "workflows"  # approval workflows: definitions and actions as the user
    REPORTS = "reports"  # native or hand-written named reports
    DELTA_SYNC = "delta_sync"  # changes_since: records changed since a watermark + tombstones
    # project: what a submit or cancel will post (ledger, stock, payment schedule) and what
    # blocks it, computed by the system itself before anything is written
    PROJECTION = "projection"


@dataclass(frozen=True)
class ConnectorProfile:
    """What one connector can do: its capabilities, the entities it maps (each with the
    operations it serves on it) and the catalogued reports it runs."""

    name: str
    capabilities: frozenset[Capability]
    entities: Mapping[str, frozenset[str]]
    reports: frozenset[str] = frozenset()
    # entity -> the canonical fields it maps; an entity not named here maps every catalog field
    fields: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # reports the connector declares itself (a mapping's named statements), by name
    declared_reports: Mapping[str, Report] = field(default_factory=dict)

    def can(self, capability: Capability) -> bool:
        return capability in self.capabilities

    def operations(self, entity: str) -> frozenset[str]:
        """The operations this connector serves on ``entity`` (empty if it does not map it)."""
        return self.entities.get(entity, frozenset())


class CapabilityMissing(ConfigError):
    """Code asked a connector for a capability its profile does not declare."""

    def __init__(self, connector: str, capability: Capability) -> None:
        super().__init__(
            f"The {connector} connector does not offer {capability.value}; "
            "no tool should have asked for it (tools are generated from the connector profile)."
        )


@dataclass
class Page:
    """One page of records, and whether more exist (never a silent cap)."""

    records: list[Record]
    start: int
    limit: int
    has_more: bool


@dataclass
class FieldInfo:
    """A field as the ERP describes it to this user (custom fields included)."""

    name: str  # canonical name, or the native name for a field the catalog does not know
    native: str
    label: str
    type: str
    options: str | None = None
    required: bool = False
    read_only: bool = False
    custom: bool = False
    permlevel: int = 0


@dataclass
class ReportResult:
    """A report's whole output: kept server-side; summarised before the model sees it."""

    report: str
    columns: list[dict[str, Any]]
    rows: list[dict[str, Any]]
    total_row: list[Any] | None = None
    summary: list[dict[str, Any]] = field(default_factory=list)
    chart: dict[str, Any] | None = None
    message: str | None = None
    prepared: bool = False


@dataclass
class Transition:
    state: str
    action: str
    next_state: str
    allowed_role: str
    allow_self_approval: bool
    condition: str | None = None


@dataclass
class WorkflowInfo:
    """A workflow definition, and — for one document — its state and the actions THIS user
    can take on it now, as the ERP computed them."""

    name: str
    entity: str
    state_field: str
    states: list[dict[str, Any]]
    transitions: list[Transition]
    document: str | None = None
    current_state: str | None = None
    available_actions: list[Transition] = field(default_factory=list)


@dataclass(frozen=True)
class RecordVersion:
    """Which version of a record the ERP holds now: its ``modified`` and its canonical lifecycle
    code (catalog/lifecycle.py: 0 draft, 1 booked, 2 cancelled, whatever the ERP's own states;
    0 for records that have no lifecycle)."""

    modified: str
    state: int = 0


@dataclass
class ChangeSet:
    """Records changed since a watermark, ids deleted since it, and the next watermark."""

    records: list[Record]
    deleted: list[str]
    watermark: str | None
    complete: bool


@dataclass
class FilledDocument:
    """A new document completed by the ERP the way its own form completes it.

    ``payload`` is what will be sent on create (the user's values plus the rates, UOMs, price
    list, currency and tax rows the ERP supplied); ``document`` adds what a person reads
    (item names, line amounts, tax amounts and totals computed from those ERP values).
    ``notes`` say what the ERP could not fill, e.g. a line with no price in the price list.
    """

    payload: Record
    document: Record
    notes: list[str] = field(default_factory=list)
    unpriced: list[int] = field(default_factory=list)  # indexes of lines without a rate
    price_list: str | None = None
    currency: str | None = None


@dataclass
class Projection:
    """What confirming a submit or a cancel will do, as the system of record computes it
    before anything is written (ERPNext: the draft's Accounting and Stock Ledger previews; for
    a cancel, its posted entries reversed and the submitted documents linked to it). A
    projection of the record as it is at ``modified``, never a record of what happened.

    ``ledger`` rows: posting_date, account, debit, credit, against, party_type, party,
    cost_center, against_voucher_type, against_voucher. ``stock`` rows: item, uom, in_qty,
    out_qty, balance_qty, warehouse, incoming_rate, valuation_rate, balance_value,
    value_change. ``payment_schedule`` rows: due_date, portion (%), amount. ``blocked_by``:
    {doctype, id} of documents that must be cancelled first; ``refusal``: the system's own
    words when it would refuse (or could not compute) the action."""

    action: str  # submit | cancel
    modified: str | None = None
    currency: str | None = None
    ledger: list[Record] = field(default_factory=list)
    stock: list[Record] = field(default_factory=list)
    payment_schedule: list[Record] = field(default_factory=list)
    blocked_by: list[Record] = field(default_factory=list)
    refusal: str | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)


class Connector(ABC):
    """One system of record. Implementations map canonical names to native ones."""

    name: str

    @abstractmethod
    async def login(self, user: str, password: str) -> Credential: ...

    @abstractmethod
    async def roles(self, cred: Credential) -> list[str]: ...

    async def user_default(self, cred: Credential, key: str) -> str | None:
        """The user's own default for ``key`` (e.g. their default company), or None."""
        return None

    async def data_scope(self, cred: Credential) -> DataScope | None:
        """Every restriction beyond roles the system applies to this user's reads (User
        Permissions, shared documents, a tenant and branches); None when it cannot be read
        completely, so nothing computed for this user is ever served to another."""
        return None

    async def owner_only(
        self, cred: Credential, roles: frozenset[str], entities: Sequence[str]
    ) -> frozenset[str] | None:
        """Which of ``entities`` this user reads only their own records of (ERPNext's
        "if owner" permissions); None when the system cannot say."""
        return frozenset()

    async def canonical_user(self, name: str) -> str | None:
        """The ERP's own id of the user who signs in as ``name`` (an id, email or username),
        asked before any password is sent (sign-in limits count per person, not per spelling);
        None when the system cannot say without the user's credential."""
        return None

    async def whoami(self, cred: Credential) -> str:
        """The ERP user id a credential (an API key pair, a bearer token) signs in as."""
        # A sign-in the system cannot take is a refusal the user can act on, not a crash.
        raise ErpAuthenticationError(
            f"The {self.name} system signs in with a user and password only, not with an API "
            "key or token."
        )

    @abstractmethod
    async def list(
        self,
        cred: Credential,
        entity: str,
        *,
        fields: Sequence[str] | None = None,
        filters: Sequence[Filter] = (),
        order_by: Sequence[tuple[str, str]] = (),
        start: int = 0,
        limit: int = 20,
    ) -> Page: ...

    @abstractmethod
    async def get(self, cred: Credential, entity: str, record_id: str) -> Record: ...

    @abstractmethod
    async def count(self, cred: Credential, entity: str, filters: Sequence[Filter] = ()) -> int: ...

    @abstractmethod
    async def aggregate(
        self, cred: Credential, entity: str, request: AggregateRequest
    ) -> AggregateResult: ...

    @abstractmethod
    async def describe(self, cred: Credential, entity: str) -> builtins.list[FieldInfo]: ...

    @abstractmethod
    async def access(self, cred: Credential, entity: str) -> dict[str, bool]:
        """What this user may do with the entity (read, create, update, submit, cancel,
        delete), as the system answers for them."""

    @abstractmethod
    def link(self, entity: str, record: Mapping[str, Any]) -> str | None:
        """The URL of the record's page in the system, if it has pages."""

    @property
    @abstractmethod
    def profile(self) -> ConnectorProfile:
        """The capabilities, entities (with operations) and reports this connector serves."""

    def native_maps(self) -> ConnectorMaps | None:
        """The connector's own native maps (id patterns, page links), when they do not ship in
        the catalog's ``maps/`` folder (a mapping file of a bespoke database, for one)."""
        return None

    async def health(self) -> None:  # noqa: B027 - optional hook: a connector that cannot check
        """Raise ``ErpUnavailable`` if the system cannot be reached now (the health check)."""

    def is_cancelled(self, entity: str, record: Mapping[str, Any]) -> bool:
        """Whether a canonical record is cancelled (no longer says anything true about the
        books): document status 2 in canonical terms; connectors may know more."""
        return record.get("docstatus") == 2

    def document_state(self, entity: str, docstatus: int) -> tuple[str, str]:
        """A document state in this system's own words: (its name, the stored condition), e.g.
        ("submitted", "docstatus = 1") in ERPNext — what a figure's definition tells the user."""
        return _STATE_WORDS.get(docstatus, str(docstatus)), f"docstatus = {docstatus}"

    def normalize_columns(self, columns: Sequence[Any]) -> builtins.list[dict[str, Any]]:
        """Report columns as ``{fieldname, label, fieldtype}`` dicts (the shared shape)."""
        return [dict(c) for c in columns if isinstance(c, Mapping)]

    # ------------------------------------------------------------ optional capabilities

    async def create(
        self,
        cred: Credential,
        entity: str,
        values: Mapping[str, Any],
        *,
        marker: str | None = None,
    ) -> Record:
        """Create a record. ``marker`` is the write's own id (made by the agent before sending):
        a connector that ``marks_creates`` for ``entity`` stores it with the record, so that
        ``find_marked`` can tell later whether a create whose answer was lost happened."""
        raise CapabilityMissing(self.name, Capability.WRITES)

    async def marks_creates(self, cred: Credential, entity: str) -> bool:
        """Whether this system keeps a create's ``marker`` on records of ``entity`` (a field
        set aside for it). Without one, a lost create is looked for by owner and time."""
        return False

    async def find_marked(
        self, cred: Credential, entity: str, marker: str
    ) -> builtins.list[Record]:
        """The records of ``entity`` that carry ``marker``, read as the user (scalar fields);
        empty means the create that carried it did not happen."""
        raise CapabilityMissing(self.name, Capability.WRITES)

    # Writes to an existing record take ``modified``: the record's version as the user saw it.
    # Given, the write is refused (TimestampMismatchError) if the record changed since.

    async def update(
        self,
        cred: Credential,
        entity: str,
        record_id: str,
        values: Mapping[str, Any],
        *,
        modified: str | None = None,
    ) -> Record:
        raise CapabilityMissing(self.name, Capability.WRITES)

    async def submit(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> Record:
        raise CapabilityMissing(self.name, Capability.LIFECYCLE)

    async def cancel(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> Record:
        raise CapabilityMissing(self.name, Capability.LIFECYCLE)

    async def delete(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> None:
        raise CapabilityMissing(self.name, Capability.LIFECYCLE)

    async def version(self, cred: Credential, entity: str, record_id: str) -> RecordVersion | None:
        """The record's current version as this user reads it; None if it does not exist."""
        raise CapabilityMissing(self.name, Capability.WRITES)

    async def created_by(
        self,
        cred: Credential,
        entity: str,
        owner: str,
        *,
        after: str | None = None,
        newest_first: bool = False,
        limit: int = 20,
    ) -> builtins.list[Record]:
        """Records of ``entity`` created by ``owner`` after the ``created`` value ``after``
        (the ERP's own clock), oldest first unless ``newest_first``; scalar fields only.
        ``CapabilityMissing`` when the system does not keep who created a record and when."""
        raise CapabilityMissing(self.name, Capability.WRITES)

    async def run_report(
        self, cred: Credential, report: str, params: Mapping[str, Any]
    ) -> ReportResult:
        raise CapabilityMissing(self.name, Capability.REPORTS)

    async def workflow(
        self, cred: Credential, entity: str, record_id: str | None = None
    ) -> WorkflowInfo | None:
        raise CapabilityMissing(self.name, Capability.WORKFLOWS)

    async def apply_workflow_action(
        self,
        cred: Credential,
        entity: str,
        record_id: str,
        action: str,
        *,
        modified: str | None = None,
    ) -> Record:
        raise CapabilityMissing(self.name, Capability.WORKFLOWS)

    async def changes_since(
        self, cred: Credential, entity: str, watermark: str | None, *, limit: int = 1000
    ) -> ChangeSet:
        raise CapabilityMissing(self.name, Capability.DELTA_SYNC)

    async def report_access(self, cred: Credential, report: str) -> bool:
        """Whether this user may run the report, as the ERP answers for them."""
        raise CapabilityMissing(self.name, Capability.REPORTS)

    async def fill_document(
        self, cred: Credential, entity: str, values: Mapping[str, Any]
    ) -> FilledDocument | None:
        """Complete a new document as the ERP's form would (prices, UOMs, taxes), as the user.

        Optional: None means this system of record offers no such helpers for ``entity``, and
        the values stand as given.
        """
        return None

    async def project(
        self, cred: Credential, entity: str, record_id: str, action: str
    ) -> Projection | None:
        """What ``action`` ("submit" or "cancel") of the record will post and what blocks it,
        computed by the system as the user before anything is written (the PROJECTION
        capability). None: nothing to project for this entity. Never an estimate of ours."""
        raise CapabilityMissing(self.name, Capability.PROJECTION)

    async def api_credential(self, admin: Credential, user: str) -> Credential | None:
        """A lasting credential for ``user`` (an API key pair the ERP issues), asked for with an
        administrator's credential; channels that cannot sign in interactively (MCP, the
        OpenAI-compatible API) act as the user with it. Optional: None means not supported.
        Issuing a new one may end the user's previous one (the ERP decides)."""
        return None

    async def notify(
        self, cred: Credential, subject: str, message: str, link: str | None = None
    ) -> str | None:
        """Leave the user a notification in the system of record itself, created as the user
        (ERPNext: a ToDo allocated to them), for subscriptions; the notification's id. Optional:
        None means this system has no such notifications."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook; most connectors hold no pool
        """Release connections."""
