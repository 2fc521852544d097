"""Generated invoices and purchase orders with known contents, for tests and benchmarks.

``SampleDocument`` is the truth; ``render_pdf`` draws it with reportlab (a text layer, as an
accounting system exports it) and ``render_png`` with Pillow (a photo or scan: optionally
rotated, blurred and speckled). Layouts and labels vary the way real suppliers' do, so a parser
tuned to one wording fails here.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["purchase_invoice", "sales_order"]

DATE_STYLES = ("iso", "dmy_slash", "d_mon_y", "month_d_y")
_NUMBER_LABELS = {
    "purchase_invoice": ("Invoice No:", "Invoice #", "Invoice Number:", "Bill No:"),
    "sales_order": ("PO Number:", "Purchase Order No:", "PO #", "Order No:"),
}
_DATE_LABELS = {
    "purchase_invoice": ("Invoice Date:", "Date:", "Date of Issue:"),
    "sales_order": ("Order Date:", "PO Date:", "Date:"),
}
_DUE_LABELS = {
    "purchase_invoice": ("Due Date:", "Payment Due:", "Due:"),
    "sales_order": ("Delivery Date:", "Required By:", "Deliver By:"),
}
_TITLES = {"purchase_invoice": ("TAX INVOICE", "INVOICE"), "sales_order": ("PURCHASE ORDER",)}
_TO_LABELS = {"purchase_invoice": ("Bill To:", "Invoice To:"), "sales_order": ("Vendor:", "To:")}


@dataclass(frozen=True)
class SampleLine:
    description: str
    qty: float
    rate: float
    item_code: str  # the item's code in the ERP
    printed_code: bool = True  # whether the document prints it (else only the description)

    @property
    def amount(self) -> float:
        return round(self.qty * self.rate, 2)


@dataclass(frozen=True)
class SampleDocument:
    """What the document says: the expected result of reading it."""

    kind: Kind
    party: str  # who issued it: the supplier of an invoice, the customer of a purchase order
    recipient: str  # our company
    number: str
    date: dt.date
    due_date: dt.date
    currency: str
    lines: tuple[SampleLine, ...]
    tax_rate: float = 16.0
    date_style: str = "iso"
    labels: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # which wording of each label
    address: str = "P.O. Box 4410, Nairobi"
    notes: tuple[str, ...] = field(default=())  # extra lines printed at the foot

    @property
    def net_total(self) -> float:
        return round(sum(line.amount for line in self.lines), 2)

    @property
    def tax_total(self) -> float:
        return round(self.net_total * self.tax_rate / 100, 2)

    @property
    def grand_total(self) -> float:
        return round(self.net_total + self.tax_total, 2)


def format_date(day: dt.date, style: str) -> str:
    if style == "dmy_slash":
        return day.strftime("%d/%m/%Y")
    if style == "d_mon_y":
        return day.strftime("%d %b %Y")
    if style == "month_d_y":
        return f"{day:%B} {day.day}, {day.year}"
    return day.isoformat()


def money(value: float) -> str:
    return f"{value:,.2f}"


def _qty(value: float) -> str:
    return f"{value:g}"


def text_rows(doc: SampleDocument) -> list[tuple[str, str]]:
    """The document as (style, text) rows in reading order; the table rows are tab-separated
    cells. Both renderers draw these, so PDF and PNG say the same thing."""
    n, d, due, title, to = doc.labels
    rows = [
        ("title", doc.party),
        ("small", doc.address),
        ("heading", _TITLES[doc.kind][title % len(_TITLES[doc.kind])]),
        ("field", f"{_NUMBER_LABELS[doc.kind][n % 4]} {doc.number}"),
        ("field", f"{_DATE_LABELS[doc.kind][d % 3]} {format_date(doc.date, doc.date_style)}"),
        ("field", f"{_DUE_LABELS[doc.kind][due % 3]} {format_date(doc.due_date, doc.date_style)}"),
        ("field", f"{_TO_LABELS[doc.kind][to % 2]} {doc.recipient}"),
        ("field", f"Currency: {doc.currency}"),
        ("table", "Item\tDescription\tQty\tUnit Price\tAmount"),
    ]
    for line in doc.lines:
        code = line.item_code if line.printed_code else ""
        rows.append(
            (
                "table",
                f"{code}\t{line.description}\t{_qty(line.qty)}\t{money(line.rate)}\t"
                f"{money(line.amount)}",
            )
        )
    rows += [
        ("total", f"Subtotal\t{money(doc.net_total)}"),
        ("total", f"VAT {doc.tax_rate:g}%\t{money(doc.tax_total)}"),
        ("total", f"Total {doc.currency}\t{money(doc.grand_total)}"),
    ]
    rows += [("small", note) for note in doc.notes]
    return rows


# ------------------------------------------------------------------ renderers

_TABLE_X = (0.0, 0.17, 0.62, 0.72, 0.87)  # column starts as a share of the usable width


def render_pdf(doc: SampleDocument, *, password: str | None = None) -> bytes:
    """An A4 PDF with a text layer, as an accounting system exports it."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, encrypt=password)
    width, height = A4
    left, usable, y = 50.0, width - 100.0, height - 60.0
    sizes = {"title": 18, "heading": 14, "field": 10, "table": 9, "total": 10, "small": 8}
    for style, text in text_rows(doc):
        pdf.setFont("Helvetica-Bold" if style in ("title", "heading") else "Helvetica", 10)
        pdf.setFontSize(sizes[style])
        if style == "table" or style == "total":
            cells = text.split("\t")
            starts = _TABLE_X if style == "table" else (0.62, 0.87)
            for cell, start in zip(cells, starts, strict=False):
                pdf.drawString(left + start * usable, y, cell)
        else:
            pdf.drawString(left, y, text)
        y -= sizes[style] + 8
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def blank_pdf(pages: int) -> bytes:
    """A PDF of ``pages`` pages with one line each (for the page limit)."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for number in range(pages):
        pdf.drawString(72, 720, f"Page {number + 1} of a long report, not an invoice.")
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def render_png(
    doc: SampleDocument,
    *,
    rotate: float = 0.0,
    noise: float = 0.0,
    blur: float = 0.0,
    seed: int = 0,
) -> bytes:
    """A grey-scale scan of the document at about 150 dpi: ``rotate`` degrees (counter-
    clockwise), ``noise`` the share of pixels flipped to speckle, ``blur`` a Gaussian radius."""
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    width, height = 1240, 1754
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    sizes = {"title": 38, "heading": 30, "field": 22, "table": 20, "total": 22, "small": 18}
    fonts = {k: ImageFont.load_default(size=v) for k, v in sizes.items()}
    left, usable, y = 90, width - 180, 90
    for style, text in text_rows(doc):
        font = fonts[style]
        if style in ("table", "total"):
            starts = _TABLE_X if style == "table" else (0.62, 0.87)
            for cell, start in zip(text.split("\t"), starts, strict=False):
                draw.text((left + start * usable, y), cell, fill=0, font=font)
        else:
            draw.text((left, y), text, fill=0, font=font)
        y += sizes[style] + 18
    if blur:
        image = image.filter(ImageFilter.GaussianBlur(blur))
    if noise:
        rng = random.Random(seed)
        pixels = image.load()
        assert pixels is not None
        for _ in range(int(width * height * noise)):
            x, yy = rng.randrange(width), rng.randrange(height)
            pixels[x, yy] = 0 if rng.random() < 0.5 else 255
    if rotate:
        image = image.rotate(rotate, expand=True, fillcolor=255, resample=Image.Resampling.BICUBIC)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


# ------------------------------------------------------------------ a test set


@dataclass(frozen=True)
class Party:
    name: str
    currency: str


@dataclass(frozen=True)
class CatalogItem:
    code: str
    name: str
    rate: float


def random_document(
    rng: random.Random,
    kind: Kind,
    parties: Sequence[Party],
    items: Sequence[CatalogItem],
    recipient: str,
    today: dt.date,
) -> SampleDocument:
    """One document from real parties and items, with varied labels, dates and line counts."""
    party = rng.choice(parties)
    chosen = rng.sample(list(items), k=min(len(items), rng.randint(1, 5)))
    with_codes = rng.random() < 0.7
    lines = tuple(
        SampleLine(
            description=item.name,
            qty=float(rng.choice((1, 2, 3, 4, 5, 6, 8, 10, 12, 20, 25, 50))),
            rate=item.rate,
            item_code=item.code,
            printed_code=with_codes,
        )
        for item in chosen
    )
    day = today - dt.timedelta(days=rng.randint(0, 60))
    prefix = "INV" if kind == "purchase_invoice" else "PO"
    return SampleDocument(
        kind=kind,
        party=party.name,
        recipient=recipient,
        number=f"{prefix}-{rng.randint(1000, 99999)}",
        date=day,
        due_date=day + dt.timedelta(days=rng.choice((7, 14, 30, 45))),
        currency=party.currency,
        lines=lines,
        tax_rate=rng.choice((16.0, 16.0, 8.0, 0.0)),
        date_style=rng.choice(DATE_STYLES),
        labels=(
            rng.randrange(4),
            rng.randrange(3),
            rng.randrange(3),
            rng.randrange(2),
            rng.randrange(2),
        ),
    )


# ------------------------------------------------------------------ scoring


def _same_number(a: object, b: float) -> bool:
    return isinstance(a, int | float) and abs(float(a) - b) < 0.005


def field_scores(
    doc: SampleDocument, read: dict[str, object], *, erp_items: bool = False
) -> dict[str, bool]:
    """Field by field, whether ``read`` says what ``doc`` says. ``read`` is flat: kind, party,
    number, date, due_date, currency, net_total, tax_total, grand_total and ``lines`` (each
    with item, qty, rate). An item is right when it is the printed code (or, where none is
    printed, the description) — or, with ``erp_items``, when it is the ERP's item code. Lines
    are compared in order; a missing line scores every field of it wrong, an extra line
    scores one wrong field."""
    scores = {
        "kind": read.get("kind") == doc.kind,
        "party": read.get("party") == doc.party,
        "number": read.get("number") == doc.number,
        "date": read.get("date") == doc.date.isoformat(),
        "due_date": read.get("due_date") == doc.due_date.isoformat(),
        "currency": read.get("currency") == doc.currency,
        "net_total": _same_number(read.get("net_total"), doc.net_total),
        "tax_total": _same_number(read.get("tax_total"), doc.tax_total),
        "grand_total": _same_number(read.get("grand_total"), doc.grand_total),
    }
    got = read.get("lines")
    rows = got if isinstance(got, list) else []
    for i, line in enumerate(doc.lines):
        row = rows[i] if i < len(rows) and isinstance(rows[i], dict) else {}
        printed = line.item_code if line.printed_code else line.description
        expected_item = line.item_code if erp_items else printed
        scores[f"line{i + 1}.item"] = row.get("item") == expected_item
        scores[f"line{i + 1}.qty"] = _same_number(row.get("qty"), line.qty)
        scores[f"line{i + 1}.rate"] = _same_number(row.get("rate"), line.rate)
    if len(rows) > len(doc.lines):
        scores["extra_lines"] = False
    return scores


def parsed_reading(parsed: dict[str, Any]) -> dict[str, object]:
    """A ``ParsedDocument.as_dict()`` flattened for ``field_scores`` (items by printed code,
    else description): what the parser alone read, before any ERP lookup."""
    fields = parsed["fields"]
    flat: dict[str, object] = {k: v["value"] for k, v in fields.items()}
    flat["kind"] = parsed["kind"]["value"]
    flat["party"] = parsed["party"]["value"]
    flat["lines"] = [
        {"item": row["code"] or row["description"], "qty": row["qty"], "rate": row["rate"]}
        for row in parsed["lines"]
    ]
    return flat


def draft_reading(result: dict[str, Any]) -> dict[str, object]:
    """A ``ScanResult.as_dict()`` flattened for ``field_scores(..., erp_items=True)``: what the
    draft proposes (party and items as the ERP's ids), with the totals as read."""
    values = result.get("values") or {}
    fields = (result.get("document") or {}).get("fields") or {}
    sales = result.get("entity") == "sales_order"
    return {
        "kind": result.get("entity"),
        "party": values.get("customer" if sales else "supplier"),
        "number": values.get("customer_po" if sales else "supplier_invoice_no"),
        "date": values.get("date"),
        "due_date": values.get("delivery_date" if sales else "due_date"),
        "currency": values.get("currency"),
        **{
            k: (fields.get(k) or {}).get("value") for k in ("net_total", "tax_total", "grand_total")
        },
        "lines": [
            {"item": row.get("item"), "qty": row.get("qty"), "rate": row.get("rate")}
            for row in values.get("items") or []
        ],
    }
