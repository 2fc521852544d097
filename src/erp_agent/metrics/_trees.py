"""A filter on a tree node takes the nodes under it, as ERPNext's tree filters do (an account
group's balance is its accounts', a parent cost center's figures its children's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Dimension
from erp_agent.errors import ErpRefusal

if TYPE_CHECKING:
    from erp_agent.metrics.compute import MetricComputer


async def subtree(
    computer: MetricComputer, dim: Dimension, values: list[Any]
) -> tuple[list[Any], bool]:
    """``values`` and every node under them, when the dimension is a tree (an account
    group, a parent cost center) read as the user; True when a group was expanded."""
    entity = computer.catalog.entities.get(dim.entity or "")
    if entity is None:  # a value some records carry, not records of its own
        return values, False
    parent = next(
        (n for n, f in entity.fields.items() if f.target == entity.name and "parent" in n),
        None,
    )
    if parent is None or "is_group" not in entity.fields:
        return values, False
    try:
        page = await computer.ctx.connector.list(
            computer.ctx.session.credential, entity.name, fields=[parent, "is_group"], limit=0
        )
    except ErpRefusal:
        return values, False  # the tree is not readable to the user: the values as given
    children: dict[Any, list[Any]] = {}
    groups = set()
    for record in page.records:
        children.setdefault(record.get(parent), []).append(record["id"])
        if record.get("is_group"):
            groups.add(record["id"])
    if not groups & set(values):
        return values, False
    found: list[Any] = []
    todo = list(values)
    while todo:
        node = todo.pop()
        if node not in found:
            found.append(node)
            todo.extend(children.get(node, []))
    return found, True
