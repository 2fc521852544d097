"""Bytes → text lines: a PDF's text layer (pypdf), Tesseract OCR for images and scanned pages,
or a vision model when one is configured. Every limit is a setting; every refusal says why.

Each line keeps a confidence (0–100: Tesseract's lowest word confidence on it; 100 for a text
layer; None from a vision model, which reports none), so the parser can flag what it read
unsure of instead of presenting it as fact.
"""

from __future__ import annotations

import io
import shutil
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from erp_agent.errors import DocumentUnreadable

if TYPE_CHECKING:
    from PIL import Image

Method = Literal["text-layer", "ocr", "vision"]
# A vision model's transcription of one page image (PNG bytes) into plain text lines.
Transcriber = Callable[[bytes], Awaitable[str]]

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "pdf"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"BM", "bmp"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
)
MIN_TEXT_CHARS = 20  # a PDF page with less text than this is treated as a scan
MIN_WORDS = 5  # fewer legible words than this: the scan is unreadable
MIN_MEAN_CONFIDENCE = 35.0  # below this mean word confidence: the scan is unreadable
UPSIDE_DOWN_BELOW = 50.0  # mean word confidence under which a half turn is tried
OCR_TARGET_WIDTH = 2000  # small photos are enlarged to about this width before OCR


@dataclass(frozen=True)
class ScanLimits:
    """What a scan may cost; over a limit the file is refused before any heavy work."""

    max_bytes: int = 20_000_000
    max_pages: int = 20
    max_pixels: int = 60_000_000
    ocr_timeout: float = 60.0

    def check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise DocumentUnreadable(
                f"The file is {size / 1_000_000:.1f} MB; the limit is "
                f"{self.max_bytes / 1_000_000:.0f} MB. Send a smaller scan or a PDF "
                "(ERP_AGENT_SCAN_MAX_BYTES raises the limit)."
            )


@dataclass(frozen=True)
class Line:
    text: str
    confidence: float | None = 100.0
    page: int = 1
    words: tuple[tuple[str, float], ...] = ()  # OCR only: each word and its confidence

    def confidence_of(self, value: str) -> float | None:
        """The lowest confidence among the words that make up ``value`` (a field read from
        this line), so a stray low-confidence speck elsewhere on the line does not count."""
        if not self.words:
            return self.confidence
        parts = [c for w, c in self.words if w.strip(".,:;#") and w.strip(".,:;#") in value]
        return min(parts) if parts else self.confidence


@dataclass(frozen=True)
class Extraction:
    format: str
    method: Method
    pages: int
    lines: tuple[Line, ...]
    rotation: float = 0.0  # degrees the first image page was turned to read it
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def sniff(data: bytes) -> str | None:
    """The file's format from its first bytes (never from its name or declared type)."""
    for magic, name in _MAGIC:
        if data.startswith(magic):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def ocr_available() -> bool:
    return shutil.which("tesseract") is not None


def _lines_from_text(text: str, page: int, confidence: float | None) -> list[Line]:
    return [Line(t.strip(), confidence, page) for t in text.splitlines() if t.strip()]


# ------------------------------------------------------------------ PDF


def _pdf_pages(data: bytes, limits: ScanLimits) -> list[tuple[str, list[bytes]]]:
    """Per page: its text layer and, when it has none, its embedded images (a scanned page)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentUnreadable(
                "This PDF is password-protected, so it cannot be read. "
                "Save it without a password (or print it to a new PDF) and upload that."
            )
        count = len(reader.pages)
        if count > limits.max_pages:
            raise DocumentUnreadable(
                f"This PDF has {count} pages; scans are limited to {limits.max_pages} pages "
                "(ERP_AGENT_SCAN_MAX_PAGES). Upload only the invoice or order itself."
            )
        pages = []
        for page in reader.pages:
            text = page.extract_text(extraction_mode="layout") or ""
            images: list[bytes] = []
            if len(text.strip()) < MIN_TEXT_CHARS:
                images = [image.data for image in page.images]
            pages.append((text, images))
        return pages
    except DocumentUnreadable:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise DocumentUnreadable(
            f"This file starts like a PDF but could not be read ({type(exc).__name__}). "
            "It may be damaged: export it again and upload the new file."
        ) from exc


# ------------------------------------------------------------------ images


def _open_image(data: bytes, limits: ScanLimits) -> Image.Image:
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
        if width * height > limits.max_pixels:
            raise DocumentUnreadable(
                f"The image is {width}×{height} pixels; the limit is "
                f"{limits.max_pixels / 1_000_000:.0f} megapixels (ERP_AGENT_SCAN_MAX_PIXELS). "
                "Send a smaller photo."
            )
        image.load()
        return ImageOps.exif_transpose(image).convert("L")
    except DocumentUnreadable:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise DocumentUnreadable(
            "This image could not be opened; it may be damaged. Send it again as PNG or JPEG."
        ) from exc


def _skew_angle(image: Image.Image) -> float:
    """The small rotation (±6°) that makes text rows most distinct: the angle whose row-sum
    profile of dark pixels has the highest variance (photos are rarely held straight)."""
    import numpy as np
    from PIL import Image

    small = image.copy()
    small.thumbnail((800, 800))
    dark = np.asarray(small) < 128
    if dark.mean() < 0.002:
        return 0.0
    picture = Image.fromarray((dark * 255).astype("uint8"))
    best, best_score = 0.0, -1.0
    for step in range(-24, 25):
        angle = step * 0.25
        rows = np.asarray(picture.rotate(angle, expand=False, fillcolor=0)).sum(axis=1)
        score = float(np.var(rows))
        if score > best_score:
            best, best_score = angle, score
    return best


def _is_sideways(image: Image.Image) -> bool:
    """Text rows make a row-sum profile far spikier than the column-sum profile; a page
    turned a quarter shows the opposite."""
    import numpy as np

    small = image.copy()
    small.thumbnail((800, 800))
    dark = np.asarray(small) < 128
    return bool(np.var(dark.sum(axis=0)) > 1.5 * np.var(dark.sum(axis=1)))


def _upright(image: Image.Image, timeout: float) -> tuple[Image.Image, float]:
    """The image turned upright: Tesseract's orientation detection for quarter turns (asked
    only when the page looks sideways: it costs seconds), then the projection-profile skew."""
    import pytesseract

    turned = 0.0
    if _is_sideways(image):
        try:
            osd = pytesseract.image_to_osd(
                image, config="--psm 0", output_type=pytesseract.Output.DICT, timeout=timeout
            )
            quarter = int(osd.get("rotate", 0)) % 360
            if quarter:
                image = image.rotate(-quarter, expand=True, fillcolor=255)
                turned = float(quarter)
        except (pytesseract.TesseractError, RuntimeError, ValueError):
            pass  # too little text to tell the orientation; read it as it is
    skew = _skew_angle(image)
    if skew:
        image = image.rotate(skew, expand=True, fillcolor=255)
    return image, turned - skew


def _read_words(image: Image.Image, timeout: float) -> tuple[list[Line], float]:
    import pytesseract

    words = pytesseract.image_to_data(
        image, config="--psm 4", output_type=pytesseract.Output.DICT, timeout=timeout
    )
    # Rows are rebuilt from word positions, not Tesseract's blocks: a table row whose code
    # column Tesseract put in another block would otherwise come apart ("SKU" | "1266-BLU …").
    found = []
    for i, word in enumerate(words["text"]):
        word = (word or "").strip()
        conf = float(words["conf"][i])
        if not word or conf < 0:
            continue
        middle = words["top"][i] + words["height"][i] / 2
        found.append((middle, words["left"][i], words["height"][i], word, conf))
    found.sort()
    height = statistics.median(h for _, _, h, _, _ in found) if found else 0
    grouped: list[list[tuple[float, int, int, str, float]]] = []
    for item in found:
        if grouped and abs(item[0] - statistics.fmean(w[0] for w in grouped[-1])) < height * 0.6:
            grouped[-1].append(item)
        else:
            grouped.append([item])
    rows = {
        n: [(w, c) for _, _, _, w, c in sorted(g, key=lambda x: x[1])]
        for n, g in enumerate(grouped)
    }
    lines = [
        Line(" ".join(w for w, _ in row), min(c for _, c in row), 1, tuple(row))
        for row in rows.values()
    ]
    confidences = [c for row in rows.values() for _, c in row]
    return lines, statistics.fmean(confidences) if confidences else 0.0


def _ocr(data: bytes, limits: ScanLimits, page: int) -> tuple[list[Line], float]:
    """OCR one image: lines with their lowest word confidence, and the rotation applied."""
    from PIL import Image, ImageFilter

    if not ocr_available():
        raise DocumentUnreadable(
            "This is an image (or a scanned PDF) and OCR is not installed on the server. "
            "An administrator can install Tesseract (Debian: apt-get install tesseract-ocr "
            "tesseract-ocr-eng) or configure a vision model; or upload a PDF with text."
        )
    image = _open_image(data, limits)
    if image.width < OCR_TARGET_WIDTH * 0.6:
        factor = OCR_TARGET_WIDTH / image.width
        image = image.resize(
            (OCR_TARGET_WIDTH, int(image.height * factor)), Image.Resampling.LANCZOS
        )
    image = image.filter(ImageFilter.MedianFilter(3))  # speckle noise breaks digits apart
    image, rotation = _upright(image, limits.ocr_timeout)
    try:
        lines, mean = _read_words(image, limits.ocr_timeout)
        if mean < UPSIDE_DOWN_BELOW:  # maybe upside down: the profile cannot tell
            flipped, flipped_mean = _read_words(image.rotate(180), limits.ocr_timeout)
            if flipped_mean > mean:
                lines, rotation = flipped, rotation + 180
    except RuntimeError as exc:  # pytesseract raises RuntimeError on its timeout
        raise DocumentUnreadable(
            f"Reading the scan took longer than {limits.ocr_timeout:.0f} seconds; "
            "send a sharper or smaller image."
        ) from exc
    return [Line(ln.text, ln.confidence, page, ln.words) for ln in lines], rotation


def _check_legible(lines: list[Line]) -> None:
    confidences = [c for line in lines for c in [line.confidence] if c is not None]
    words = sum(len(line.text.split()) for line in lines)
    mean = statistics.fmean(confidences) if confidences else 100.0
    if words < MIN_WORDS or mean < MIN_MEAN_CONFIDENCE:
        raise DocumentUnreadable(
            "No legible text was found in this file"
            + (f" (OCR confidence {mean:.0f}%)" if confidences else "")
            + ". Send a sharper, well-lit scan of a printed invoice or purchase order."
        )


# ------------------------------------------------------------------ the one entry


def extract_sync(data: bytes, limits: ScanLimits) -> Extraction:
    """Text lines from ``data`` without a model (text layer, else OCR). CPU-bound: run it in
    a thread."""
    started = time.perf_counter()
    limits.check_size(len(data))
    kind = sniff(data)
    if kind is None:
        raise DocumentUnreadable(
            "This file is not a PDF or an image (PNG, JPEG, TIFF, WebP, BMP, GIF). "
            "Upload the invoice or purchase order as one of those."
        )
    lines: list[Line] = []
    rotation = 0.0
    method: Method = "text-layer"
    pages = 1
    if kind == "pdf":
        pdf = _pdf_pages(data, limits)
        pages = len(pdf)
        for number, (text, images) in enumerate(pdf, start=1):
            if len(text.strip()) >= MIN_TEXT_CHARS:
                lines.extend(_lines_from_text(text, number, 100.0))
                continue
            for image in images:
                method = "ocr"
                found, turned = _ocr(image, limits, number)
                lines.extend(found)
                rotation = rotation or turned
    else:
        method = "ocr"
        lines, rotation = _ocr(data, limits, 1)
    _check_legible(lines)
    return Extraction(kind, method, pages, tuple(lines), rotation, time.perf_counter() - started)


def page_images(data: bytes, limits: ScanLimits) -> list[bytes]:
    """PNG bytes of each page image for a vision model: the image itself, or the images of a
    PDF's pages that have no text layer. Empty when the PDF has text (no model is needed)."""
    limits.check_size(len(data))
    kind = sniff(data)
    if kind is None:
        return []
    if kind == "pdf":
        raw = [img for text, images in _pdf_pages(data, limits) for img in images]
    else:
        raw = [data]
    out = []
    for item in raw:
        image = _open_image(item, limits)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


def from_transcription(text: str, kind: str, pages: int, seconds: float) -> Extraction:
    """A vision model's transcription as an Extraction (no per-word confidence)."""
    lines = _lines_from_text(text, 1, None)
    _check_legible(lines)
    return Extraction(kind, "vision", pages, tuple(lines), 0.0, seconds)
