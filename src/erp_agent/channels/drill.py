"""Opening a figure's documents from any channel: the web app's click (``GET /api/drill/{ref}``),
``erp-agent drill REF`` and the links MCP and the OpenAI-compatible API give. One gateway call
of ``results.drill`` as the signed-in user (allowed? audited), its rows kept as a result of
theirs, and a table block of them, shaped like any other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from erp_agent.calls.outcome import Outcome
from erp_agent.calls.session import Session
from erp_agent.results.blocks import Block, TableBlock
from erp_agent.results.render import materialise
from erp_agent.tools.modules.drill import NAME

if TYPE_CHECKING:
    from erp_agent.runtime import Runtime


@dataclass
class Opened:
    """What opening a reference gave: the gateway's outcome and, when it was allowed, the
    drill-down (figure, what was listed, notes) and its table block."""

    outcome: Outcome
    data: dict[str, Any] | None = None
    block: Block | None = None
    result_id: str | None = None

    @property
    def summary(self) -> dict[str, Any]:
        data = self.data or {}
        return {k: data.get(k) for k in ("ref", "title", "figure", "listed", "notes")}


async def open_figure(runtime: Runtime, session: Session, ref: str) -> Opened:
    outcome = await runtime.gateway.call(session, NAME, {"ref": ref})
    if not outcome.ok or not isinstance(outcome.data, dict):
        return Opened(outcome)
    shaped = await runtime.shaper.shape(session, outcome)
    data = outcome.data
    block: TableBlock = {
        "type": "table",
        "title": data.get("title") or "",
        "result_id": shaped.result_id,
        "columns": None,
    }
    shown = await materialise(
        block, runtime.results, session.user, runtime.links.document, runtime.catalog
    )
    return Opened(outcome, data, shown, shaped.result_id)
