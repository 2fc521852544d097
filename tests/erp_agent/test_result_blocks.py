"""Blocks read back from JSON (a stored turn, a cached answer) pass one edge check: a block
without its kind is dropped there, so code that branches on ``block["type"]`` never meets one."""

from __future__ import annotations

from erp_agent.results.blocks import blocks_of


def test_stored_blocks_keep_every_block_with_a_kind() -> None:
    stored = [
        {"type": "text", "text": "Revenue: KES 1,000"},
        {"type": "table", "columns": ["a"], "rows": [[1]]},
        {"type": "a kind this version does not know", "x": 1},
    ]
    assert blocks_of(stored) == stored


def test_a_damaged_block_is_dropped_not_raised() -> None:
    kept = {"type": "text", "text": "ok"}
    assert blocks_of([kept, {"text": "no kind"}, {"type": 3}, "junk", None]) == [kept]
    assert blocks_of(None) == []
    assert blocks_of({"type": "text"}) == []
