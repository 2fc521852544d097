"""The terminal shows the model's text as it streams (the status line), and drops it when the
figure check sends the answer back for correction."""

from __future__ import annotations

from erp_agent.cli._render import StatusText
from erp_agent.events import GuardTriggered, TextDelta, Thinking


def test_the_status_line_follows_the_streamed_text() -> None:
    text = StatusText()
    assert text.after(Thinking("t1", round=1)) == "Thinking…"
    assert text.after(TextDelta("t1", text="Revenue this year ")) == "Revenue this year"
    assert (
        text.after(TextDelta("t1", text="was KES 1,234.00."))
        == "Revenue this year was KES 1,234.00."
    )
    long = text.after(TextDelta("t1", text=" and more" * 40))
    assert long is not None
    assert long.startswith("…")
    assert len(long) == 100
    assert (
        text.after(GuardTriggered("t1", guard="provenance", detail="1,234.00"))
        == "Checking the figures…"
    )
    assert text.after(TextDelta("t1", text="Corrected")) == "Corrected"
