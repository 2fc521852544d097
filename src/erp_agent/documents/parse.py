"""Text lines → the fields of an invoice or purchase order, by deterministic rules (no model).

What is read: the kind (supplier invoice or customer purchase order, from the title), the
issuing party (labelled, else the letterhead), the document number, dates, currency, the line
table (a row is text followed by quantity, rate and amount that multiply out), taxes and
totals. Every field carries a confidence and, when it is not sure, the reason — an OCR
misread, totals that do not add up, an ambiguous day/month — so the draft can flag it. Rows
are checked against each other (qty × rate = amount, lines add up to the subtotal, subtotal +
tax = total) because an OCR'd digit is the commonest error and arithmetic catches it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from erp_agent.documents.extract import Line
from erp_agent.documents.values import (
    CURRENCIES,
    DATE,
    NUMBER,
    SYMBOLS,
    Reading,
    numbers_in,
    parse_date,
)

LOW_CONFIDENCE = 60.0  # an OCR'd line read below this is flagged as uncertain
_LABELS = {
    "number": {
        "purchase_invoice": r"(?:tax\s+)?invoice\s*(?:no\.?|number|num|#)|inv\s*(?:no\.?|#)|bill\s*(?:no\.?|number|#)|invoice\b",
        "sales_order": r"(?:p\.?o\.?|purchase\s+order|order)\s*(?:no\.?|number|num|#)|p\.?o\.?\b",
    },
    "due_date": {
        "purchase_invoice": r"due\s+date|payment\s+due|due\s+on|due\b|pay\s+by",
        "sales_order": r"delivery\s+date|required\s+by|deliver(?:y)?\s+(?:by|on)|need(?:ed)?\s+by",
    },
    "date": {
        "purchase_invoice": r"invoice\s+date|date\s+of\s+issue|issue\s+date|bill\s+date|date\b",
        "sales_order": r"order\s+date|p\.?o\.?\s+date|date\s+of\s+order|date\b",
    },
}
_PARTY_LABELS = {
    "purchase_invoice": r"supplier|vendor|seller|from|issued\s+by|billed\s+by",
    "sales_order": r"customer|buyer|from|ordered\s+by|purchaser",
}
_RECIPIENT_LABELS = {
    "purchase_invoice": r"bill\s+to|invoice\s+to|billed\s+to|sold\s+to|customer|buyer|to\b",
    "sales_order": r"vendor|supplier|seller|to\b",
}
_SUBTOTAL = re.compile(
    r"\b(sub[\s-]?total|net\s+total|total\s+before\s+tax|total\s+excl\w*|net\s+amount)\b", re.I
)
_TAX = re.compile(r"\b(vat|tax|gst|sales\s+tax)\b", re.I)
_GRAND = re.compile(
    r"\b(grand\s+total|total\s+due|amount\s+due|balance\s+due|total\s+payable|total)\b", re.I
)
_TABLE_HEAD = re.compile(r"\b(qty|quantity|qnty)\b", re.I)
_HEAD_WORDS = re.compile(
    r"\b(item|description|qty|quantity|unit\s+price|price|rate|amount)\b", re.I
)
_TITLE_PO = re.compile(r"\b(local\s+)?purchase\s+order\b|\bL\.?P\.?O\b", re.I)
_TITLE_INVOICE = re.compile(r"\b(tax\s+invoice|invoice|bill)\b", re.I)


@dataclass
class ParsedLine:
    code: str | None
    description: str
    qty: float
    rate: float
    amount: float
    confidence: float | None = 100.0
    doubt: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ParsedDocument:
    kind: Reading
    party: Reading  # the issuer's name as printed
    party_candidates: list[str]
    recipient: str | None
    fields: dict[str, Reading]  # number, date, due_date, currency, net_total, tax_total, ...
    lines: list[ParsedLine] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "unread": self.unread,
            "kind": self.kind.as_dict(),
            "party": self.party.as_dict(),
            "party_candidates": self.party_candidates,
            "recipient": self.recipient,
            "fields": {k: v.as_dict() for k, v in self.fields.items()},
            "lines": [line.as_dict() for line in self.lines],
        }


# ------------------------------------------------------------------ values


def _currency(lines: list[Line]) -> Reading | None:
    codes = "|".join(CURRENCIES)
    labelled = re.compile(rf"currency\s*:?\s*({codes})\b", re.I)
    for line in lines:
        match = labelled.search(line.text)
        if match:
            return _reading(match.group(1).upper(), line)
    counts: dict[str, int] = {}
    first: dict[str, Line] = {}
    for line in lines:
        for code in re.findall(rf"\b({codes})\b", line.text.upper()):
            counts[code] = counts.get(code, 0) + 1
            first.setdefault(code, line)
        for symbol, code in SYMBOLS.items():
            if symbol in line.text.upper().replace(" ", "") and code not in counts:
                counts[code] = counts.get(code, 0)
                first.setdefault(code, line)
    if not counts:
        return None
    best = max(counts, key=lambda c: counts[c])
    reading = _reading(best, first[best])
    if counts[best] == 0:
        reading.doubt = f"only a currency symbol was printed; read as {best}"
    return reading


def _reading(value: Any, line: Line, doubt: str | None = None) -> Reading:
    printed = f"{value:,.2f}" if isinstance(value, float) else str(value)
    confidence = line.confidence_of(printed)
    if doubt is None and confidence is not None and confidence < LOW_CONFIDENCE:
        doubt = f"read with low OCR confidence ({confidence:.0f}%) from “{line.text}”"
    return Reading(value, confidence, doubt)


# ------------------------------------------------------------------ fields


def _kind(lines: list[Line]) -> Reading:
    head = lines[:12]
    for line in head:
        if _TITLE_PO.search(line.text) and not _TITLE_INVOICE.search(line.text):
            return _reading("sales_order", line)
    for line in head:
        if _TITLE_INVOICE.search(line.text):
            return _reading("purchase_invoice", line)
    return Reading(
        "purchase_invoice", None, "no title says invoice or purchase order; read as an invoice"
    )


def _labelled(lines: list[Line], label: str) -> tuple[str, Line] | None:
    pattern = re.compile(rf"(?:^|\s)(?:{label})\s*[:#.]?\s*(.+)$", re.I)
    for line in lines:
        match = pattern.search(line.text)
        if match and match.group(1).strip():
            return match.group(1).strip(), line
    return None


def _number(lines: list[Line], kind: str) -> Reading | None:
    pattern = re.compile(
        rf"(?:^|\s)(?:{_LABELS['number'][kind]})\s*[:#.]?\s*([A-Z0-9][A-Z0-9\-/_.]*)", re.I
    )
    for line in lines:
        for match in pattern.finditer(line.text):
            value = match.group(1).strip(".")
            if any(ch.isdigit() for ch in value) and not DATE.fullmatch(value):
                return _reading(value, line)
    return None


def _date_field(lines: list[Line], kind: str, name: str) -> Reading | None:
    label = re.compile(rf"(?:^|\s)(?:{_LABELS[name][kind]})\s*[:.]?", re.I)
    due = re.compile(_LABELS["due_date"][kind], re.I)
    for line in lines:
        match = label.search(line.text)
        if not match:
            continue
        if name == "date" and due.search(line.text[: match.end()]):
            continue  # "Due date:" is not the document date
        reading = parse_date(line.text[match.end() :])
        if reading:
            return _reading(reading.value, line, reading.doubt)
    return None


def _is_table_head(text: str) -> bool:
    """The table's column header: two or more column words (one may be OCR'd beyond use)."""
    return len({m.lower() for m in _HEAD_WORDS.findall(text)}) >= 2 and not numbers_in(text)


def _header_dates(lines: list[Line]) -> list[tuple[Reading, Line]]:
    out = []
    for line in lines:
        if _is_table_head(line.text):
            break
        label, _, rest = line.text.partition(":")
        reading = parse_date(rest or label)
        if reading:
            out.append((reading, line))
    return out


def _unlabelled_date(lines: list[Line]) -> Reading | None:
    """The first date in the header when no label said "date" (an OCR'd "Oate:"); a guess,
    flagged."""
    found = _header_dates(lines)
    if not found:
        return None
    reading, line = found[0]
    label = line.text.partition(":")[0].strip()
    return _reading(reading.value, line, f"label “{label}” not recognised; read as the date")


def _unlabelled_later_date(lines: list[Line], after: dt.date) -> Reading | None:
    """A later date on a labelled header line whose label was not recognised (an OCR'd
    "Oue Date:"): probably the due/delivery date, and flagged as a guess."""
    for reading, line in _header_dates(lines):
        if reading.value > after:
            label = line.text.partition(":")[0].strip()
            return _reading(
                reading.value, line, f"label “{label}” not recognised; read as the due date"
            )
    return None


def _letterhead(lines: list[Line]) -> list[str]:
    """Names printed at the top before the title and the fields: the issuer's letterhead."""
    out = []
    for line in lines[:6]:
        text = line.text.strip()
        if _TITLE_INVOICE.search(text) or _TITLE_PO.search(text) or ":" in text:
            break
        letters = sum(ch.isalpha() for ch in text)
        if letters >= 3 and letters >= 0.6 * len(text.replace(" ", "")):
            out.append(re.split(r"\s{2,}", text)[0])
    return out


def _party(lines: list[Line], kind: str) -> tuple[Reading, list[str], str | None]:
    recipient = _labelled(lines, _RECIPIENT_LABELS[kind])
    labelled = _labelled(lines, _PARTY_LABELS[kind])
    candidates: list[str] = []
    if labelled and (recipient is None or labelled[1] is not recipient[1]):
        candidates.append(re.split(r"\s{2,}", labelled[0])[0])
    candidates += [c for c in _letterhead(lines) if c not in candidates]
    recipient_name = re.split(r"\s{2,}", recipient[0])[0] if recipient else None
    candidates = [c for c in candidates if c != recipient_name]
    if not candidates:
        return Reading(None, None, "no party name was found"), [], recipient_name
    source = next((ln for ln in lines if candidates[0] in ln.text), lines[0])
    return _reading(candidates[0], source), candidates, recipient_name


_CODE_TOKEN = re.compile(r"^(?=.*[\dA-Z])[A-Z0-9][A-Z0-9\-_./]*\.?$")


def _split_code(text: str) -> tuple[str | None, str]:
    """A leading item code (tokens in capitals/digits/punctuation) and the description."""
    tokens = text.split()
    code: list[str] = []
    for index, token in enumerate(tokens):
        if token.startswith("$") and len(token) > 1:
            token = "S" + token[1:]  # OCR reads a leading S as $
        token = token.rstrip(":;,")
        after = tokens[index + 1] if index + 1 < len(tokens) else ""
        # A capitalised prefix ("SKU") starts a code when digits follow ("SKU 1266-BLU").
        prefix = token.isalpha() and token.isupper() and any(ch.isdigit() for ch in after)
        if _CODE_TOKEN.match(token) and (
            any(ch.isdigit() for ch in token) or not token.isalpha() or code or prefix
        ):
            code.append(token)
            continue
        break
    if not code or len(code) == len(tokens):
        return None, _clean(text)
    text_code = re.sub(r"(?<=\d) (?=\d)", "", " ".join(code))  # OCR split "96 18"
    joined = re.sub(r"[\s._/]+", "-", text_code).strip("-")
    joined = re.sub(r"-{2,}", "-", joined)
    return joined, _clean(" ".join(tokens[len(code) :]))


def _clean(description: str) -> str:
    return description.strip(" \t—–-,.;:|*").strip()


def _row(line: Line) -> ParsedLine | None:
    """A table row: description text, then qty, rate and amount (the last three numbers)."""
    if DATE.search(line.text):
        return None  # a header line with a date, not a table row
    found = [(v, end) for v, pct, end in numbers_in(line.text) if not pct]
    guessed = len(found) == 2  # the quantity did not read as a number ("i)" for 5)
    if len(found) < 2:
        return None
    if guessed:
        (rate, _), (amount, _) = found
        qty = float(round(amount / rate)) if rate else 0.0
        if not rate or qty <= 0 or abs(qty * rate - amount) > 0.015:
            return None
    else:
        (qty, _), (rate, _), (amount, _) = found[-3:]
    start = line.text.rfind(_last_tokens(line.text, 2 if guessed else 3))
    label = line.text[:start].strip() if start > 0 else ""
    if not any(ch.isalpha() for ch in label) or qty <= 0:
        return None
    code, description = _split_code(label)
    row = ParsedLine(code, description, qty, rate, amount, line.confidence_of(line.text))
    if abs(qty * rate - amount) > max(0.015, abs(amount) * 0.0005):
        row.doubt = f"qty × rate ({qty:g} × {rate:,.2f}) is not the amount printed ({amount:,.2f})"
    elif guessed:
        row.doubt = f"the quantity is not legible; read as amount ÷ rate = {qty:g}"
    elif line.confidence is not None and line.confidence < LOW_CONFIDENCE:
        row.doubt = f"read with low OCR confidence ({line.confidence:.0f}%)"
    return row


def _last_tokens(text: str, count: int) -> str:
    """The text from the ``count``-th last number to the end."""
    ends = [m.start() for m in NUMBER.finditer(text)]
    if len(ends) < count:
        return text
    return text[ends[-count] :]


def _hypotheses(row: ParsedLine) -> list[tuple[float, float, float, str | None]]:
    """Readings of a row whose numbers do not multiply out: one of qty, rate, amount is wrong."""
    out: list[tuple[float, float, float, str | None]] = [
        (row.qty, row.rate, round(row.qty * row.rate, 2), None)
    ]
    if row.rate:
        qty = row.amount / row.rate
        if abs(qty - round(qty)) < 1e-6 and round(qty) > 0:
            out.append((float(round(qty)), row.rate, row.amount, "qty"))
    if row.qty:
        rate = row.amount / row.qty
        if abs(rate * 100 - round(rate * 100)) < 1e-6:
            out.append((row.qty, round(rate, 2), row.amount, "rate"))
    return out


def _reconcile(rows: list[ParsedLine], targets: list[float]) -> None:
    """Correct rows whose qty × rate ≠ amount where exactly one reading of them makes the lines
    add up to the printed subtotal (an OCR'd digit is the usual cause); they stay flagged."""
    doubtful = [r for r in rows if r.doubt and "qty × rate" in r.doubt][:6]
    if not doubtful or not targets:
        return
    fixed = sum(r.amount for r in rows if r not in doubtful)
    options = [_hypotheses(r) for r in doubtful]
    matches = []
    for combo in itertools.product(*options):
        total = fixed + sum(amount for _, _, amount, _ in combo)
        if any(abs(total - target) < 0.015 for target in targets):
            matches.append(combo)
    if len(matches) != 1:
        return
    for row, (qty, rate, amount, changed) in zip(doubtful, matches[0], strict=True):
        printed = {"qty": f"{row.qty:g}", "rate": f"{row.rate:,.2f}"}.get(changed or "")
        row.doubt = (
            f"{changed} read as {printed}; {'qty' if changed == 'qty' else 'rate'} taken from "
            "the amount, which matches the subtotal"
            if changed
            else f"amount read as {row.amount:,.2f}; qty × rate matches the subtotal"
        )
        row.qty, row.rate, row.amount = qty, rate, amount


def _totals(lines: list[Line]) -> dict[str, Reading]:
    out: dict[str, Reading] = {}
    for line in lines:
        values = [(v, pct) for v, pct, _ in numbers_in(line.text)]
        amounts = [v for v, pct in values if not pct]
        if not amounts or len(amounts) > 2:
            continue
        if _SUBTOTAL.search(line.text):
            out.setdefault("net_total", _reading(amounts[-1], line))
        elif _TAX.search(line.text):
            if "tax_total" not in out:
                out["tax_total"] = _reading(amounts[-1], line)
                rates = [v for v, pct in values if pct]
                if rates:
                    out["tax_rate"] = _reading(rates[0], line)
        elif _GRAND.search(line.text) and not _TABLE_HEAD.search(line.text):
            out["grand_total"] = _reading(amounts[-1], line)  # the last "total" line wins
    return out


def _check_totals(fields: dict[str, Reading], rows: list[ParsedLine]) -> None:
    net, tax, grand = (fields.get(k) for k in ("net_total", "tax_total", "grand_total"))
    lines_sum = round(sum(r.amount for r in rows), 2)
    if net and rows and abs(net.value - lines_sum) > 0.015:
        if tax and grand and abs(lines_sum + tax.value - grand.value) < 0.015:
            net.doubt = (
                f"read as {net.value:,.2f}; the lines and the total agree on {lines_sum:,.2f}"
            )
            net.value = lines_sum
        else:
            net.doubt = net.doubt or f"the lines add up to {lines_sum:,.2f}, not {net.value:,.2f}"
    if net and tax and grand and abs(net.value + tax.value - grand.value) > 0.015:
        grand.doubt = grand.doubt or (
            f"subtotal + tax is {net.value + tax.value:,.2f}, not {grand.value:,.2f}"
        )
    if grand and not net and rows and not tax and abs(grand.value - lines_sum) > 0.015:
        grand.doubt = grand.doubt or f"the lines add up to {lines_sum:,.2f}"


def parse(lines: list[Line] | tuple[Line, ...]) -> ParsedDocument:
    """The fields of the document in ``lines`` (reading order)."""
    lines = [line for line in lines if line.text.strip()]
    kind = _kind(lines)
    party, candidates, recipient = _party(lines, kind.value)
    fields: dict[str, Reading] = {}
    for name, reading in (
        ("number", _number(lines, kind.value)),
        ("date", _date_field(lines, kind.value, "date")),
        ("due_date", _date_field(lines, kind.value, "due_date")),
        ("currency", _currency(lines)),
    ):
        fields[name] = reading or Reading(None, None, f"no {name.replace('_', ' ')} was found")
    if fields["date"].value is None:
        fields["date"] = _unlabelled_date(lines) or fields["date"]
    if fields["due_date"].value is None and fields["date"].value is not None:
        fields["due_date"] = (
            _unlabelled_later_date(lines, fields["date"].value) or fields["due_date"]
        )
    totals = _totals(lines)
    header = next((i for i, ln in enumerate(lines) if _is_table_head(ln.text)), -1)
    rows = []
    unread: list[str] = []  # table lines that did not read as a row: flagged, never dropped
    for line in lines[header + 1 :]:
        if _SUBTOTAL.search(line.text) or (
            _GRAND.search(line.text) and not _TABLE_HEAD.search(line.text)
        ):
            break
        row = _row(line)
        if row is not None:
            rows.append(row)
        elif numbers_in(line.text) and sum(ch.isalpha() for ch in line.text) >= 3:
            unread.append(line.text)
    targets = [r.value for k, r in totals.items() if k == "net_total"]
    if "grand_total" in totals and "tax_total" in totals:
        targets.append(round(totals["grand_total"].value - totals["tax_total"].value, 2))
    _reconcile(rows, targets)
    fields.update(totals)
    _check_totals(fields, rows)
    return ParsedDocument(kind, party, candidates, recipient, fields, rows, unread)
