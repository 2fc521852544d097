"""Stock movements: Stock Ledger Entries, Bins (moving average valuation) and Stock Entry.

A simplification of ERPNext's ``stock_ledger.py``: entries are valued in the order they are
posted (no reposting of back-dated entries), one Bin per item and warehouse. Every movement of a
voucher is computed before anything is written, so an insufficient-stock error leaves no trace.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers.common import (
    fetch_item_names,
    flt,
    get_company,
    get_item,
    get_warehouse,
    ledger_columns,
    reserve_series,
    validate_accounting_period,
)
from demo_erp.controllers.gl import GLRow, cancel_gl_entries, gl_row, make_gl_entries
from demo_erp.exceptions import NegativeStockError, ValidationError
from demo_erp.meta import get_meta


@dataclass
class Move:
    item_code: str
    warehouse: str
    qty: float  # signed: > 0 in, < 0 out
    incoming_rate: float = 0.0
    # Transfers bring stock in at the rate it left the source warehouse.
    rate_from_previous: bool = False


@dataclass
class _BinState:
    name: str | None
    actual_qty: float
    valuation_rate: float
    stock_value: float
    ordered_qty: float = 0.0
    reserved_qty: float = 0.0


def _load_bin(ctx: Ctx, item_code: str, warehouse: str) -> _BinState:
    row = ctx.conn.execute(
        "select name, actual_qty, valuation_rate, stock_value, ordered_qty, reserved_qty "
        'from "tabBin" where item_code = ? and warehouse = ?',
        (item_code, warehouse),
    ).fetchone()
    if row is None:
        return _BinState(None, 0.0, 0.0, 0.0)
    return _BinState(
        row["name"],
        flt(row["actual_qty"], 6),
        flt(row["valuation_rate"]),
        flt(row["stock_value"]),
        flt(row["ordered_qty"], 6),
        flt(row["reserved_qty"], 6),
    )


def _insufficient(
    item_code: str, item_name: str, warehouse: str, shortfall: float
) -> NegativeStockError:
    return NegativeStockError(
        f'{shortfall} units of <a href="/app/item/{item_code}">Item {item_code}: {item_name}</a> '
        f'needed in <a href="/app/warehouse/{warehouse}">Warehouse {warehouse}</a> to complete '
        "this transaction.",
        title="Insufficient Stock",
    )


def _apply(ctx: Ctx, bins: dict[tuple[str, str], _BinState], move: Move) -> dict[str, Any] | None:
    """Apply one movement to the in-memory bins; the SLE values, or None for non-stock items."""
    item = get_item(ctx, move.item_code)
    if item is None or not item.get("is_stock_item"):
        return None
    key = (move.item_code, move.warehouse)
    if key not in bins:
        bins[key] = _load_bin(ctx, *key)
    state = bins[key]
    qty = flt(move.qty, 6)
    new_qty = flt(state.actual_qty + qty, 6)
    if qty < 0 and new_qty < 0 and not item.get("allow_negative_stock"):
        raise _insufficient(move.item_code, item.get("item_name") or "", move.warehouse, -new_qty)
    old_value = state.stock_value
    if qty > 0:
        rate = flt(move.incoming_rate) or state.valuation_rate or flt(item.get("valuation_rate"))
        new_value = old_value + qty * rate
        valuation_rate = flt(new_value / new_qty) if new_qty > 0 else rate
        if new_qty <= 0:
            new_value = new_qty * valuation_rate
        incoming_rate = rate
    else:
        valuation_rate = state.valuation_rate or flt(item.get("valuation_rate"))
        new_value = new_qty * valuation_rate
        incoming_rate = 0.0
    new_value = flt(new_value)
    state.actual_qty, state.valuation_rate, state.stock_value = new_qty, valuation_rate, new_value
    return {
        "item_code": move.item_code,
        "warehouse": move.warehouse,
        "actual_qty": qty,
        "qty_after_transaction": new_qty,
        "incoming_rate": incoming_rate,
        "valuation_rate": valuation_rate,
        "stock_value": new_value,
        "stock_value_difference": flt(new_value - old_value),
    }


def _write(
    ctx: Ctx,
    doc: Doc,
    entries: list[dict[str, Any]],
    bins: dict[tuple[str, str], _BinState],
    is_cancelled: int,
) -> None:
    meta = get_meta("Stock Ledger Entry")
    assert meta is not None
    now = ctx.now()
    posting_date = str(doc.get("posting_date"))[:10]
    names = reserve_series(ctx, f"MAT-SLE-{posting_date[:4]}-", len(entries)) if entries else []
    rows = []
    for name, entry in zip(names, entries, strict=True):
        rows.append(
            {
                **ledger_columns(ctx, name, now),
                "posting_date": posting_date,
                "posting_time": doc.get("posting_time") or "00:00:00",
                "voucher_type": doc["doctype"],
                "voucher_no": doc["name"],
                "company": doc.get("company"),
                "is_cancelled": is_cancelled,
                "branch": doc.get("branch"),
                **entry,
            }
        )
    if rows:
        columns = [c for c in meta.column_names if c in rows[0]]
        ctx.conn.executemany(
            f'insert into "tabStock Ledger Entry" ({", ".join(chr(34) + c + chr(34) for c in columns)}) '
            f"values ({', '.join('?' for _ in columns)})",
            [[row.get(c) for c in columns] for row in rows],
        )
    for (item_code, warehouse), state in bins.items():
        projected = flt(state.actual_qty + state.ordered_qty - state.reserved_qty, 6)
        if state.name is None:
            item = get_item(ctx, item_code) or {}
            state.name = secrets.token_hex(5)
            ctx.conn.execute(
                'insert into "tabBin" (name, owner, creation, modified, modified_by, docstatus, idx, '
                "item_code, warehouse, actual_qty, reserved_qty, ordered_qty, projected_qty, "
                "valuation_rate, stock_value, stock_uom) values (?, ?, ?, ?, ?, 0, 0, ?, ?, ?, 0, 0, ?, ?, ?, ?)",
                (
                    state.name, ctx.user, now, now, ctx.user, item_code, warehouse,
                    state.actual_qty, projected, state.valuation_rate, state.stock_value,
                    item.get("stock_uom"),
                ),
            )  # fmt: skip
        else:
            ctx.conn.execute(
                'update "tabBin" set actual_qty = ?, projected_qty = ?, valuation_rate = ?, '
                "stock_value = ?, modified = ?, modified_by = ? where name = ?",
                (
                    state.actual_qty, projected, state.valuation_rate, state.stock_value,
                    now, ctx.user, state.name,
                ),
            )  # fmt: skip


def make_sl_entries(ctx: Ctx, doc: Doc, moves: list[Move]) -> list[dict[str, Any]]:
    """Post the voucher's movements; returns the SLE values (with stock_value_difference)."""
    bins: dict[tuple[str, str], _BinState] = {}
    entries = []
    last_out_rate = 0.0
    for move in moves:
        if move.rate_from_previous:
            move.incoming_rate = last_out_rate
        entry = _apply(ctx, bins, move)
        if entry is None:
            continue
        if move.qty < 0:
            last_out_rate = entry["valuation_rate"]
        entries.append(entry)
    _write(ctx, doc, entries, bins, is_cancelled=0)
    return entries


def cancel_sl_entries(ctx: Ctx, doc: Doc) -> None:
    """Reverse the voucher's stock: originals marked cancelled, reversing rows also cancelled."""
    rows = ctx.conn.execute(
        'select * from "tabStock Ledger Entry" where voucher_type = ? and voucher_no = ? '
        "and is_cancelled = 0 order by rowid",
        (doc["doctype"], doc["name"]),
    ).fetchall()
    if not rows:
        return
    bins: dict[tuple[str, str], _BinState] = {}
    entries = []
    for row in reversed(rows):
        key = (row["item_code"], row["warehouse"])
        if key not in bins:
            bins[key] = _load_bin(ctx, *key)
        state = bins[key]
        item = get_item(ctx, row["item_code"]) or {}
        qty = -flt(row["actual_qty"], 6)
        new_qty = flt(state.actual_qty + qty, 6)
        if qty < 0 and new_qty < 0 and not item.get("allow_negative_stock"):
            raise _insufficient(
                row["item_code"], item.get("item_name") or "", row["warehouse"], -new_qty
            )
        difference = -flt(row["stock_value_difference"])
        new_value = flt(state.stock_value + difference)
        if new_qty > 0:
            state.valuation_rate = flt(new_value / new_qty)
        state.actual_qty, state.stock_value = new_qty, new_value
        entries.append(
            {
                "item_code": row["item_code"],
                "warehouse": row["warehouse"],
                "actual_qty": qty,
                "qty_after_transaction": new_qty,
                "incoming_rate": row["incoming_rate"] if qty > 0 else 0.0,
                "valuation_rate": state.valuation_rate,
                "stock_value": new_value,
                "stock_value_difference": difference,
                "posting_time": row["posting_time"],
            }
        )
    ctx.conn.execute(
        'update "tabStock Ledger Entry" set is_cancelled = 1, modified = ?, modified_by = ? '
        "where voucher_type = ? and voucher_no = ? and is_cancelled = 0",
        (ctx.now(), ctx.user, doc["doctype"], doc["name"]),
    )
    _write(ctx, doc, entries, bins, is_cancelled=1)


def stock_account(ctx: Ctx, warehouse: str, company: dict[str, Any]) -> str | None:
    wh = get_warehouse(ctx, warehouse) or {}
    return wh.get("account") or company.get("default_inventory_account")


def stock_gl_rows(
    ctx: Ctx, entries: list[dict[str, Any]], company: dict[str, Any], against_account: str | None
) -> list[GLRow]:
    """Perpetual inventory: the stock account moves by the value difference, against one account."""
    rows: list[GLRow] = []
    for entry in entries:
        value = flt(entry["stock_value_difference"])
        if not value:
            continue
        rows.append(gl_row(stock_account(ctx, entry["warehouse"], company), debit=value))
        rows.append(gl_row(against_account, credit=value))
    return rows


def default_posting_time(doc: Doc) -> None:
    if "posting_time" in doc and not doc.get("posting_time"):
        doc["posting_time"] = "00:00:00"


def validate_warehouses(rows: list[Doc], default: str | None, field: str = "warehouse") -> None:
    for row in rows:
        if not row.get(field) and default:
            row[field] = default


@register("Stock Entry")
class StockEntry(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        default_posting_time(doc)
        purpose = doc.get("stock_entry_type")
        doc["purpose"] = purpose
        total = 0.0
        items = doc.get("items") or []
        fetch_item_names(ctx, items)
        for row in items:
            if purpose in ("Material Issue", "Material Transfer") and not row.get("s_warehouse"):
                row["s_warehouse"] = doc.get("from_warehouse")
            if purpose in ("Material Receipt", "Material Transfer") and not row.get("t_warehouse"):
                row["t_warehouse"] = doc.get("to_warehouse")
            if purpose == "Material Receipt":
                row["s_warehouse"] = None
            if purpose == "Material Issue":
                row["t_warehouse"] = None
            if not row.get("s_warehouse") and not row.get("t_warehouse"):
                raise ValidationError(
                    f"Row #{row.get('idx')}: Source or Target Warehouse is mandatory"
                )
            if not row.get("basic_rate"):
                item = get_item(ctx, row.get("item_code")) or {}
                row["basic_rate"] = flt(item.get("valuation_rate"))
            row["amount"] = flt(flt(row.get("qty"), 6) * flt(row.get("basic_rate")))
            total += row["amount"]
        doc["total_amount"] = flt(total)

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        company = get_company(ctx, doc.get("company"))
        moves: list[Move] = []
        for row in doc.get("items") or []:
            qty = flt(row.get("qty"), 6)
            if row.get("s_warehouse"):
                moves.append(Move(row["item_code"], row["s_warehouse"], -qty))
            if row.get("t_warehouse"):
                moves.append(
                    Move(
                        row["item_code"],
                        row["t_warehouse"],
                        qty,
                        flt(row.get("basic_rate")),
                        rate_from_previous=bool(row.get("s_warehouse")),
                    )
                )
        entries = make_sl_entries(ctx, doc, moves)
        adjustment = company.get("stock_adjustment_account")
        rows: list[GLRow] = []
        for entry in entries:
            value = flt(entry["stock_value_difference"])
            if value:
                rows.append(gl_row(stock_account(ctx, entry["warehouse"], company), debit=value))
                if doc.get("purpose") != "Material Transfer":
                    rows.append(gl_row(adjustment, credit=value))
        if doc.get("purpose") == "Material Transfer":
            # Value moves between warehouses at the outgoing rate; any rounding goes to adjustment.
            residual = flt(sum(r["debit"] for r in rows))
            if residual:
                rows.append(gl_row(adjustment, credit=residual))
        make_gl_entries(ctx, doc, rows)

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_sl_entries(ctx, doc)
        cancel_gl_entries(ctx, doc)
