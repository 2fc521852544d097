"""Reciprocal rank fusion: robust to the two legs' incomparable score scales."""

from __future__ import annotations

from collections.abc import Sequence

LEG_K = 60  # candidates taken from each leg
RRF_K = 60  # the RRF constant (Cormack et al. 2009)


def fuse(legs: Sequence[Sequence[tuple[str, float]]], *, k: int = RRF_K) -> list[tuple[str, float]]:
    """Keys scored by sum(1 / (k + rank)) over the legs that ranked them, best first; ties
    broken by key so results are deterministic."""
    scores: dict[str, float] = {}
    for leg in legs:
        for rank, (key, _) in enumerate(leg, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
