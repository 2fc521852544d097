"""Tokens × the price per model: one turn's cost, in millionths of the price table's currency.

Prices are per million tokens, so ``tokens × price`` *is* the cost in millionths: an integer
up to the prices' own decimals, rounded half-even once per turn. Prompt tokens read from the
provider's cache (``cached``) and written to it (``cache_write``, Anthropic) have prices of
their own; they are counted inside ``prompt_tokens`` (models/base.Usage), so the rest of the
prompt is priced at the prompt price.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

from erp_agent.config import ModelPrice, Settings

MICROS = Decimal(1_000_000)


def _dec(value: float) -> Decimal:
    return Decimal(str(value))  # the price as written, not its binary approximation


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    currency: str = "USD"

    @classmethod
    def from_settings(cls, settings: Settings) -> PriceTable:
        # getattr: tests assemble runtimes with stand-in settings.
        return cls(dict(getattr(settings, "prices", {})), getattr(settings, "cost_currency", "USD"))

    def price(self, model: str) -> ModelPrice | None:
        """The model's price: its exact name first, else the first glob that matches it."""
        if model in self.prices:
            return self.prices[model]
        for pattern, price in self.prices.items():
            if fnmatch.fnmatchcase(model, pattern):
                return price
        return None

    def cost_micros(
        self,
        model: str,
        *,
        prompt: int,
        cached: int = 0,
        cache_write: int = 0,
        completion: int = 0,
    ) -> int | None:
        """The cost in millionths of ``currency``; None when the model has no price (a turn
        that used no tokens costs 0 either way)."""
        price = self.price(model)
        if price is None:
            return 0 if prompt == completion == 0 else None
        fresh = max(prompt - cached - cache_write, 0)
        total = (
            fresh * _dec(price.prompt)
            + cached * _dec(price.prompt if price.cached is None else price.cached)
            + cache_write * _dec(price.prompt if price.cache_write is None else price.cache_write)
            + completion * _dec(price.completion)
        )
        return int(total.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def money(micros: int | None) -> Decimal | None:
    """Millionths as an amount of the currency (exact)."""
    return None if micros is None else Decimal(micros) / MICROS
