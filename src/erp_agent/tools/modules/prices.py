"""prices.lookup: what an item costs or sells for, per price list, each rate with its currency.

An item's ``standard_rate`` is a default in the company's currency; what a customer is charged
or a supplier charges is the Item Price of a price list (selling or buying), in that price
list's currency and per its unit of measure. Read as the user.
"""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.connectors.query import Filter, Op
from erp_agent.tools.base import Args, Definition, Effect, Requirement, Shape, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj

MAX_PRICES = 100
_FIELDS = ["id", "item", "price_list", "rate", "currency", "uom", "selling", "buying"]


def _side(row: dict[str, Any]) -> str:
    sides = [s for s in ("selling", "buying") if row.get(s)]
    return " and ".join(sides) or "unspecified"


def tools(catalog: Catalog) -> list[Tool]:
    if "item_price" not in catalog.entities:
        return []
    titled = catalog.entity("item").title_field if "item" in catalog.entities else None

    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        cred = ctx.session.credential
        items = args["item"] if isinstance(args["item"], list) else [args["item"]]
        filters = [Filter("item", Op.IN, items)]
        side = args.get("side", "both")
        if side in ("selling", "buying"):
            filters.append(Filter(side, Op.EQ, True))
        if args.get("price_list"):
            filters.append(Filter("price_list", Op.EQ, args["price_list"]))
        page = await ctx.connector.list(
            cred, "item_price", fields=_FIELDS, filters=filters, limit=MAX_PRICES
        )
        names: dict[str, str] = {}
        if titled is not None:
            found = await ctx.connector.list(
                cred,
                "item",
                fields=["id", titled.name],
                filters=[Filter("id", Op.IN, items)],
                limit=len(items),
            )
            names = {str(r.get("id")): str(r.get(titled.name) or "") for r in found.records}
        rows = [
            {
                "item": r.get("item"),
                "item_name": names.get(str(r.get("item")), ""),
                "price_list": r.get("price_list"),
                "side": _side(r),
                "rate": r.get("rate"),
                "currency": r.get("currency"),
                "per": r.get("uom"),
            }
            for r in page.records
        ]
        which = f"{side} " if side in ("selling", "buying") else ""
        text = (
            f"The {which}Item Prices of {', '.join(map(str, items))}"
            + (f" in price list {args['price_list']}" if args.get("price_list") else "")
            + ": each price list's rate, in that price list's currency, per the unit named. "
            "Rates in different currencies are never converted or added."
        )
        definition: Definition = {
            "text": text,
            "record_count": len(rows),
            "source": "ERP Item Price records, read as you",
        }
        out: dict[str, Any] = {"rows": rows, "definition": definition}
        if page.has_more:
            out["capped"] = f"Only the first {MAX_PRICES} prices are shown; name a price list."
        if not rows:
            out["note"] = (
                "No Item Price found: the item has no price in a price list you can see "
                "(its standard selling rate, on the item, is in the company's currency)."
            )
        return out

    return [
        Tool(
            name="prices.lookup",
            description=(
                "What an item sells for or costs us: its Item Prices per price list (selling, "
                "buying or both), each rate with its currency and unit of measure. Use for "
                "'what do we charge for X', 'what does X cost us', 'price of X in USD'."
            ),
            parameters=obj(
                {
                    "item": {
                        "anyOf": [
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}, "maxItems": 20},
                        ],
                        "description": "The item code(s).",
                    },
                    "side": {"type": "string", "enum": ["selling", "buying", "both"]},
                    "price_list": {"type": "string", "description": "One price list's name."},
                },
                ["item"],
            ),
            effect=Effect.READ,
            module="selling",
            run=run,
            requires=(Requirement(entity="item_price", right="read"),),
            entity="item_price",
            action="lookup",
            shape=Shape.ROWS,
        )
    ]
