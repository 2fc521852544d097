"""Hostile and broken uploads for the scan red-team tests, built byte by byte: each one cheap to
send and, unbounded, expensive to read."""

from __future__ import annotations

import io
import struct
import zlib


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(width: int, height: int, *, rows: bytes | None = None, colour: bool = False) -> bytes:
    """A PNG of ``width``×``height`` white pixels (grey or RGB), written without Pillow so its
    header can claim any size: the pixel data of a huge white image compresses to almost
    nothing (a decompression bomb). ``rows`` replaces the compressed pixel data."""
    channels = 3 if colour else 1
    header = struct.pack(">IIBBBBB", width, height, 8, 2 if colour else 0, 0, 0, 0)
    if rows is None:
        packer = zlib.compressobj(9)
        line = b"\0" + b"\xff" * (width * channels)
        parts = [packer.compress(line) for _ in range(height)]
        rows = b"".join(parts) + packer.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", rows)
        + _chunk(b"IEND", b"")
    )


def bomb_png(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width``×``height`` with a few bytes of pixel data."""
    return png(width, height, rows=zlib.compress(b"\0" * 1024))


def pdf(objects: list[bytes], root: int = 1) -> bytes:
    """A PDF of ``objects`` (numbered from 1) with a correct cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<</Root %d 0 R/Size %d>>\nstartxref\n%d\n%%%%EOF\n"
        % (root, len(objects) + 1, xref)
    )
    return out.getvalue()


def _stream(head: bytes, data: bytes) -> bytes:
    return b"<<" + head + b"/Length %d>>\nstream\n" % len(data) + data + b"\nendstream"


FONT = b"/Font<</F1<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>>>"


def pdf_page(box: tuple[float, float], content: bytes = b"", xobjects: bytes = b"") -> list[bytes]:
    """Catalog, pages and one page of ``box`` points with ``content`` in Helvetica as /F1
    (objects 1–4)."""
    resources = (
        b"/Resources<<" + FONT + (b"/XObject<<" + xobjects + b">>" if xobjects else b"") + b">>"
    )
    return [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 %g %g]/Contents 4 0 R%s>>"
        % (box[0], box[1], resources),
        _stream(b"", content),
    ]


def wide_page_pdf() -> bytes:
    """One page 14,000 points wide and 10 high, with text at both ends."""
    text = b"BT /F1 8 Tf 10 2 Td (Invoice INV-1) Tj 13900 0 Td (Total 100.00) Tj ET"
    return pdf(pdf_page((14_000, 10), text))


def image_pdf(width: int, height: int) -> bytes:
    """One A4 page showing an image XObject that declares ``width``×``height`` grey pixels
    and holds a few compressed bytes (its decoded size is what the declaration says)."""
    page = pdf_page((595, 842), b"q 595 0 0 842 0 0 cm /Im0 Do Q", b"/Im0 5 0 R")
    image = _stream(
        b"/Type/XObject/Subtype/Image/Width %d/Height %d/ColorSpace/DeviceGray"
        b"/BitsPerComponent 8/Filter/FlateDecode" % (width, height),
        zlib.compress(b"\xff" * 4096),
    )
    return pdf([*page, image])


def deep_pdf(depth: int) -> bytes:
    """A PDF whose page's content stream holds an array nested ``depth`` deep."""
    return pdf(pdf_page((595, 842), b"[" * depth + b"]" * depth + b" pop"))


def many_pages_pdf(count: int) -> bytes:
    """``count`` empty pages under one page-tree node (written directly: thousands of pages
    in a few hundred kilobytes)."""
    kids = b" ".join(b"%d 0 R" % (n + 4) for n in range(count))
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[" + kids + b"]/Count %d>>" % count,
        _stream(b"", b""),
    ]
    objects += [b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Contents 3 0 R>>"] * count
    return pdf(objects)


def lying_count_pdf(count: int) -> bytes:
    """Like ``many_pages_pdf`` but the page tree claims a single page."""
    data = many_pages_pdf(count)
    return data.replace(b"/Count %d>>" % count, b"/Count 1>>" + b" " * (len(str(count)) - 1))


def content_bomb_pdf(operations: int) -> bytes:
    """One page whose compressed content stream (about 10 KB for a million) shows a letter
    ``operations`` times: parsing it costs memory no size check sees."""
    content = b"BT /F1 8 Tf " + b"(a) Tj " * operations + b"ET"
    objects = pdf_page((595, 842))
    objects[3] = _stream(b"/Filter/FlateDecode", zlib.compress(content, 9))
    return pdf(objects)


def jpeg_claiming(width: int, height: int) -> bytes:
    """A small JPEG whose frame header is rewritten to claim ``width``×``height``."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (64, 64), 255).save(buffer, format="JPEG")
    data = bytearray(buffer.getvalue())
    frame = data.index(b"\xff\xc0")  # SOF0: length (2), precision (1), height (2), width (2)
    data[frame + 5 : frame + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def truncated_png() -> bytes:
    """A real 800×600 PNG cut off inside its pixel data."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.effect_noise((800, 600), 64).convert("L").save(buffer, format="PNG")
    return buffer.getvalue()[: len(buffer.getvalue()) // 2]


def dense_print_png() -> bytes:
    """An A4 page at 300 dpi packed with small print: a legitimate file that keeps
    Tesseract busy for tens of seconds (330 KB)."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (2480, 3508), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=22)
    for y in range(20, 3480, 28):
        draw.text((20, y), "Qty 12 x 450.00 Widget blue SKU-1266 " * 4, fill=0, font=font)
    buffer = io.BytesIO()
    page.save(buffer, format="PNG")
    return buffer.getvalue()


def form_fanout_pdf(fanout: int, depth: int) -> bytes:
    """One page drawing a form that draws the next form ``fanout`` times, ``depth`` deep, the
    last drawing a small image: ``fanout ** depth`` images to decode from a few hundred bytes
    (and, with ``fanout`` 1 and the last form drawing the first, a form that draws itself)."""
    first = 5
    page = pdf_page((595, 842), b"/F0 Do", b"/F0 %d 0 R" % first)
    forms = []
    for level in range(depth):
        number = first + level
        names = b"".join(b"/F%d %d 0 R" % (n, number + 1) for n in range(fanout))
        forms.append(
            _stream(
                b"/Type/XObject/Subtype/Form/BBox[0 0 10 10]/Resources<</XObject<<"
                + names
                + b">>>>",
                b" ".join(b"/F%d Do" % n for n in range(fanout)),
            )
        )
    image = _stream(
        b"/Type/XObject/Subtype/Image/Width 16/Height 16/ColorSpace/DeviceGray"
        b"/BitsPerComponent 8/Filter/FlateDecode",
        zlib.compress(b"\xff" * 256),
    )
    return pdf([*page, *forms, image])


def cyclic_form_pdf() -> bytes:
    """One page drawing a form whose resources hold the form itself."""
    page = pdf_page((595, 842), b"/F0 Do", b"/F0 5 0 R")
    form = _stream(
        b"/Type/XObject/Subtype/Form/BBox[0 0 10 10]/Resources<</XObject<</Me 5 0 R>>>>",
        b"/Me Do",
    )
    return pdf([*page, form])
