"""calculator.evaluate: exact arithmetic for figures the user or a tool gave — never eval."""

from __future__ import annotations

from typing import Any

from erp_agent.analytics.calculator import FUNCTIONS, MAX_LENGTH, evaluate, format_decimal
from erp_agent.catalog import Catalog
from erp_agent.tools.base import Args, Effect, ReadHandler, Shape, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj


async def _evaluate(ctx: ToolContext, args: Args) -> dict[str, Any]:
    expression = str(args["expression"])
    value = evaluate(expression)
    return {"expression": expression, "result": format_decimal(value)}


def tools(catalog: Catalog) -> list[Tool]:
    handler: ReadHandler = _evaluate
    return [
        Tool(
            name="calculator.evaluate",
            description=(
                "Exact decimal arithmetic: + - * / // % ** and parentheses, and the functions "
                f"{', '.join(sorted(FUNCTIONS))}. Use for any figure you derive yourself "
                "(a difference, a ratio, a VAT amount) instead of working it out. Write plain "
                "numbers: no thousands separators or currency symbols (1234.50, not $1,234.50). "
                "% is the remainder: 15% of 200 is 200 * 15 / 100. round(x, 2) rounds half up. "
                "Returns result as exact decimal text."
            ),
            parameters=obj(
                {
                    "expression": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_LENGTH,
                        "description": "e.g. round((1250000 - 980000) / 980000 * 100, 1)",
                    }
                },
                ["expression"],
            ),
            effect=Effect.READ,
            module="calculator",
            run=handler,
            action="evaluate",
            shape=Shape.WHOLE,
        )
    ]
