"""What the gateway answers: one shape for every path, with a model-visible rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, NotRequired, TypedDict

from erp_agent.errors import RefusalView
from erp_agent.store.records import FieldChange, ProjectionView, Unrequested


class ProposalView(TypedDict):
    """A prepared write as every confirm surface shows it (``gateway.proposals.proposal_view``):
    the exact values or the diff, and the hash that binds a confirm to them. Typed here, where
    a call's outcome carries it; what the tool writes (payload, document) is the ERP's JSON."""

    id: str
    tool: str
    summary: str
    payload: dict[str, Any]
    payload_hash: str
    diff: list[FieldChange]  # field, before, after (updates)
    document: dict[str, Any] | None  # the whole document to be created
    status: str
    status_text: str
    expires_at: str
    conversation_id: str | None
    base_modified: str | None
    superseded_by: str | None
    unrequested: NotRequired[Unrequested]  # the content warning (``gateway/origin.py``)
    projection: NotRequired[ProjectionView]  # what the ERP computed the write will post


class ChoiceOption(TypedDict):
    label: str
    value: str
    edit: NotRequired[dict[str, str]]  # picking it edits a proposal instead of replying


class Choices(TypedDict):
    """A question for the user with the records they may mean, tagged as the response block it
    becomes (``results.blocks.ChoicesBlock``)."""

    type: Literal["choices"]
    question: str
    options: list[ChoiceOption]
    slot: NotRequired[str]  # the slot of the reading the answer fills


def without_hash(view: ProposalView) -> dict[str, Any]:
    """A proposal as a model or an outside client sees it: the payload hash binds the web app's
    confirm to what it showed, and is nobody else's business."""
    return {k: v for k, v in view.items() if k != "payload_hash"}


class Status(StrEnum):
    OK = "ok"
    REFUSED = "refused"  # the session may not use this tool (or this proposal)
    INVALID = "invalid"  # the arguments are wrong: the errors say how
    PROPOSAL = "proposal"  # a write was prepared; it runs only after the user confirms
    ERP_REFUSED = "erp_refused"  # the ERP said no: its own words in ``refusal``
    ERROR = "error"  # something failed that the model cannot fix
    # A confirmed write got no answer: whether it happened is unknown until the ERP can be
    # asked (the proposal is "checking"); it is never written again meanwhile.
    CHECKING = "checking"


@dataclass
class Outcome:
    status: Status
    tool: str
    data: Any = None
    message: str = ""
    errors: list[str] = field(default_factory=list)
    refusal: RefusalView | None = None
    proposal: ProposalView | None = None
    choices: Choices | None = None
    # After a decision: the message recorded in the proposal's conversation (not for the model).
    conversation_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def for_model(self) -> dict[str, Any]:
        """The tool message content: results pass through unchanged; failures say what to do."""
        if self.status is Status.OK:
            return {"status": "ok", "result": self.data}
        out: dict[str, Any] = {"status": str(self.status), "message": self.message}
        if self.errors:
            out["errors"] = self.errors
        if self.refusal:
            out["erp_refusal"] = self.refusal
        if self.proposal:
            out["proposal"] = without_hash(self.proposal)  # the model never needs the hash
        if self.choices:
            out["choices"] = self.choices
        return out
