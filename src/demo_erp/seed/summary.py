"""What a seed run produced, for the CLI to print."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SeedSummary:
    """Counts of documents created per DocType, and how long it took."""

    path: str
    seed: int
    today: str
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    # Sales invoices written by the bulk path (``invoices=N``): no GL, stock or payments.
    bulk_invoices: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def lines(self) -> list[str]:
        """Human-readable lines: one per DocType, then the totals."""
        width = max((len(k) for k in self.counts), default=10)
        out = [f"{doctype:<{width}}  {count:>9,}" for doctype, count in sorted(self.counts.items())]
        out.append(f"{'Total':<{width}}  {self.total:>9,}")
        out.append(
            f"Seeded {self.path} (seed {self.seed}, today {self.today}) in {self.seconds:.1f} s"
        )
        out.extend(self.notes)
        return out
