"""A new document completed by Tryton's own form logic (``default_get`` and ``on_change``).

Prices, units, taxes and amounts are what Tryton's form computes for this user, never ours:
the header takes the model's defaults (company, currency, warehouse) and the changes its
``on_change`` makes for the values the user gave (a party brings its addresses and payment
term); each line takes what ``on_change`` of its product sets (unit, list price, taxes) unless
the user named a price; the totals are what ``on_change`` of the lines computes. ``create``
runs the same steps, so what the user confirmed is what Tryton stores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from erp_agent.connectors.base import FilledDocument
from erp_agent.connectors.tryton.native import Native, plain

if TYPE_CHECKING:
    from erp_agent.connectors.credentials import Credential
    from erp_agent.connectors.tryton.seam import Tryton


def _clean(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if "." not in k}


def _ids(value: Any) -> list[int]:
    """Ids from an on_change Many2Many answer ({'add': [[index, {'id': 1}]]}) or a list."""
    if isinstance(value, Mapping):
        return [int(item[1]["id"]) for item in value.get("add", []) if item[1].get("id", -1) > 0]
    return [int(v) for v in value or []]


def _writable(fields: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    return {k: v for k, v in values.items()
            if k in fields and not fields[k].get("readonly") and k != "id"}  # fmt: skip


async def _complete(
    connector: Tryton, cred: Credential, native: Native, values: Mapping[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any], list[str], list[int]]:
    """(header, native lines, totals, notes, unpriced line indexes), all as Tryton fills them."""
    model = native.model
    given = await connector._native_values(cred, native, values)
    defaults = _clean(await connector.rpc(cred, f"{model}.default_get", list(native.fields)))
    for clause in native.emap.domain:  # the entity's own kind: type = out
        if isinstance(clause, list) and len(clause) == 3 and clause[1] == "=":
            defaults[str(clause[0])] = clause[2]
    header = {**defaults, **given}
    if given:
        changed = await connector.rpc(cred, f"{model}.on_change", header, sorted(given))
        header.update(_clean(changed))
        header.update(given)
    table = next((n for n in native.mapped() if native.fmap(n).fields), None)
    lines: list[dict[str, Any]] = []
    notes: list[str] = []
    unpriced: list[int] = []
    if table is None:
        return header, lines, {}, notes, unpriced
    tmap = native.fmap(table)
    line_model = str(tmap.doctype)
    line_fields = connector._fields.get(line_model)
    if line_fields is None:
        line_fields = dict(await connector.rpc(cred, f"{line_model}.fields_get", []))
        connector._fields[line_model] = line_fields
    parent = str(native.fields[tmap.native].get("relation_field"))
    names = {c: m.native for c, m in tmap.fields.items()}
    for index, row in enumerate(values.get(table) or []):
        product = row.get("item")
        line: dict[str, Any] = {"type": "line", parent: header, "taxes": []}
        if product is not None:
            relation = str(line_fields[names["item"]]["relation"])
            line[names["item"]] = await connector._resolve(cred, relation, product)
        line[names.get("qty", "quantity")] = float(row.get("qty") or 1)
        changed = await connector.rpc(cred, f"{line_model}.on_change", line, [names["item"]])
        line.update(changed)  # rec_names ("product.") kept for the reader, never sent back
        line["taxes"] = _ids(line.get("taxes"))
        if row.get("rate") is not None:
            line[names.get("rate", "unit_price")] = Decimal(str(row["rate"]))
        if line.get(names.get("rate", "unit_price")) is None:
            unpriced.append(index)
            notes.append(f"Line {index + 1}: Tryton has no price for {product}; give a rate.")
        else:
            amount = await connector.rpc(
                cred, f"{line_model}.on_change_with", _clean(line), ["amount"]
            )
            line.update(_clean(amount))
        line["taxes"] = _ids(line.get("taxes"))
        lines.append(line)
    totals: dict[str, Any] = {}
    if lines and not unpriced:
        body = {**header, tmap.native: [{**{k: v for k, v in _clean(ln).items() if k != parent},
                                         "id": -1 - i} for i, ln in enumerate(lines)]}  # fmt: skip
        changed = await connector.rpc(cred, f"{model}.on_change", body, [tmap.native])
        totals = {k: v for k, v in _clean(changed).items()
                  if k in ("untaxed_amount", "tax_amount", "total_amount")}  # fmt: skip
    return header, lines, totals, notes, unpriced


async def prepare(
    connector: Tryton, cred: Credential, native: Native, values: Mapping[str, Any]
) -> dict[str, Any]:
    """The values to ``create`` a record with, completed by Tryton as its form would."""
    header, lines, _totals, _notes, _unpriced = await _complete(connector, cred, native, values)
    out = _writable(native.fields, header)
    table = next((n for n in native.mapped() if native.fmap(n).fields), None)
    if table is not None and lines:
        tmap = native.fmap(table)
        line_fields = connector._fields[str(tmap.doctype)]
        created = []
        for line in lines:
            clean = _writable(line_fields, line)
            clean.pop(str(native.fields[tmap.native].get("relation_field")), None)
            clean["taxes"] = [["add", _ids(line.get("taxes"))]]
            created.append(clean)
        out[tmap.native] = [["create", created]]
    return out


async def fill(
    connector: Tryton, cred: Credential, native: Native, values: Mapping[str, Any]
) -> FilledDocument | None:
    table = next((n for n in native.mapped() if native.fmap(n).fields), None)
    if table is None:
        return None
    header, lines, totals, notes, unpriced = await _complete(connector, cred, native, values)
    tmap = native.fmap(table)
    names = {c: m.native for c, m in tmap.fields.items()}
    rows_payload: list[dict[str, Any]] = []
    rows_document: list[dict[str, Any]] = []
    for given, line in zip(values.get(table) or [], lines, strict=False):
        rate = line.get(names.get("rate", "unit_price"))
        unit = (line.get(f"{names.get('uom', 'unit')}.") or {}).get("rec_name")
        product = (line.get(f"{names['item']}.") or {}).get("rec_name") or given.get("item")
        payload = {**given, "rate": plain(rate)} if rate is not None else dict(given)
        if unit and "uom" in names:
            payload["uom"] = unit
        rows_payload.append(payload)
        rows_document.append({**payload, "item_name": product,
                              "amount": plain(line.get(names.get("amount", "amount")))})  # fmt: skip
    payload = {k: v for k, v in values.items() if k != table}
    payload[table] = rows_payload
    document = {**payload, table: rows_document}
    for canonical, key in (("net_total", "untaxed_amount"), ("tax_total", "tax_amount"),
                           ("total", "total_amount")):  # fmt: skip
        if key in totals and canonical in native.emap.fields:
            document[canonical] = plain(totals[key])
    currency = await _currency(connector, cred, header.get("currency"))
    if currency:
        document["currency"] = currency
    return FilledDocument(payload, document, notes, unpriced, None, currency)


async def _currency(connector: Tryton, cred: Credential, currency: Any) -> str | None:
    if not isinstance(currency, int):
        return None
    rows: Sequence[Mapping[str, Any]] = await connector.rpc(
        cred, "currency.currency.read", [currency], ["code"]
    )
    return str(rows[0]["code"]) if rows else None
