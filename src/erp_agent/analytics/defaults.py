"""The analyses' defaults, importable without pandas: the analytics tools name them in their
schemas, and the analyses take them as their parameters' defaults."""

from __future__ import annotations

DEFAULT_RANGES = (30, 60, 90, 120)  # ageing buckets, in days past due
THRESHOLD = 3.5  # |robust z| past which a document or a day is flagged
