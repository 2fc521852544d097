"""Nested-set numbering (lft/rgt) for tree DocTypes, as Frappe's ``rebuild_tree`` does."""

from __future__ import annotations

import sqlite3

from demo_erp.meta import get_meta

TREE_PARENT_FIELDS = {
    "Account": "parent_account",
    "Cost Center": "parent_cost_center",
    "Territory": "parent_territory",
    "Customer Group": "parent_customer_group",
    "Item Group": "parent_item_group",
    "Warehouse": "parent_warehouse",
}


def rebuild_tree(conn: sqlite3.Connection, doctype: str) -> None:
    """Renumber lft/rgt of every node of ``doctype``; siblings keep their insertion order."""
    meta = get_meta(doctype)
    assert meta is not None, doctype
    assert meta.is_tree, doctype
    parent_field = TREE_PARENT_FIELDS[doctype]
    rows = conn.execute(
        f'select name, "{parent_field}" as parent from "{meta.table_name}" order by rowid'
    ).fetchall()
    children: dict[str | None, list[str]] = {}
    names = {row["name"] for row in rows}
    for row in rows:
        parent = row["parent"] if row["parent"] in names else None
        children.setdefault(parent, []).append(row["name"])
    numbers: list[tuple[int, int, str]] = []
    counter = 0

    # Iterative depth-first walk: deep charts must not hit the recursion limit.
    stack: list[tuple[str, bool]] = [(name, False) for name in reversed(children.get(None, []))]
    lft: dict[str, int] = {}
    while stack:
        name, done = stack.pop()
        counter += 1
        if done:
            numbers.append((lft[name], counter, name))
            continue
        lft[name] = counter
        stack.append((name, True))
        stack.extend((child, False) for child in reversed(children.get(name, [])))
    conn.executemany(f'update "{meta.table_name}" set lft = ?, rgt = ? where name = ?', numbers)


def rebuild_all(conn: sqlite3.Connection) -> None:
    for doctype in TREE_PARENT_FIELDS:
        rebuild_tree(conn, doctype)
