"""Bytes → text lines: a PDF's text layer (pypdf), Tesseract OCR for images and scanned pages,
or a vision model when one is configured. Every limit is a setting; every refusal says why.

Each line keeps a confidence (0–100: Tesseract's lowest word confidence on it; 100 for a text
layer; None from a vision model, which reports none), so the parser can flag what it read
unsure of instead of presenting it as fact.
"""

from __future__ import annotations

import io
import shutil
import signal
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from erp_agent.documents import images as img
from erp_agent.documents.limits import ScanLimits
from erp_agent.errors import DocumentUnreadable

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["Extraction", "Line", "ScanLimits", "Transcriber", "extract_sync", "page_images"]

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
FORM_DEPTH = 8  # how deep a PDF page's forms are searched for images
MAX_PAGE_XOBJECTS = 500  # images and forms one scanned page may draw (a scan: one, or strips)


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


def _check_page_count(count: int, limits: ScanLimits) -> None:
    if count > limits.max_pages:
        raise DocumentUnreadable(
            f"This PDF has {count} pages; scans are limited to {limits.max_pages} pages "
            "(ERP_AGENT_SCAN_MAX_PAGES). Upload only the invoice or order itself."
        )


def _declared_pages(reader: Any) -> int:
    """The page count the PDF's page tree states, read before the tree is walked (walking
    thousands of pages is itself the cost); 0 when it states none."""
    try:
        count = reader.trailer["/Root"]["/Pages"]["/Count"]
        return int(count) if isinstance(count, int) else 0
    except (KeyError, TypeError, ValueError, AttributeError):
        return 0


def _dictionary(value: Any) -> Any:
    """``value`` resolved, if it is a PDF dictionary; else None."""
    from pypdf.generic import DictionaryObject

    value = value.get_object() if hasattr(value, "get_object") else value
    return value if isinstance(value, DictionaryObject) else None


def _page_images(page: Any, number: int) -> list[tuple[int, int, str]]:
    """The declared width, height and colour of each image a page (or a form on it) draws, as
    often as it is drawn (pypdf decodes it as often), read before any image is decoded."""
    found: list[tuple[int, int, str]] = []
    drawn = 0
    stack: list[tuple[Any, tuple[int, ...]]] = [(page.get("/Resources"), ())]
    while stack:
        resources, forms = stack.pop()
        resources = _dictionary(resources)
        xobjects = _dictionary(resources.get("/XObject")) if resources is not None else None
        for value in xobjects.values() if xobjects is not None else ():
            drawn += 1
            if drawn > MAX_PAGE_XOBJECTS:
                raise DocumentUnreadable(
                    f"Page {number} of this PDF draws more than {MAX_PAGE_XOBJECTS} images and "
                    "forms; a scanned page is one image or a few strips. Send the page scanned "
                    "as one image at 150–300 dpi, or a PDF with text."
                )
            xobject = _dictionary(value)
            if xobject is None:
                continue
            if xobject.get("/Subtype") == "/Image":
                width, height = xobject.get("/Width", 0), xobject.get("/Height", 0)
                gray = xobject.get("/ColorSpace") == "/DeviceGray" or xobject.get("/ImageMask")
                if isinstance(width, int) and isinstance(height, int):
                    found.append((int(width), int(height), "L" if gray else "RGB"))
            elif (
                xobject.get("/Subtype") == "/Form"
                and id(xobject) not in forms  # a form that draws itself
                and len(forms) < FORM_DEPTH
            ):
                stack.append((xobject.get("/Resources"), (*forms, id(xobject))))
    return found


def _check_page_images(page: Any, number: int, limits: ScanLimits) -> None:
    """Each image a scanned page shows, admitted by the size it declares before pypdf decodes
    it (a few compressed bytes can declare billions of pixels)."""
    total = 0
    for width, height, mode in _page_images(page, number):
        limits.check_shape(width, height, f"An image on page {number}")
        limits.admit(width, height, mode, f"Decoding an image on page {number}")
        total += width * height
    if total > limits.max_pixels:
        raise DocumentUnreadable(
            f"The images on page {number} add up to {total / 1_000_000:,.0f} megapixels; the "
            f"limit is {limits.max_pixels / 1_000_000:.0f} (ERP_AGENT_SCAN_MAX_PIXELS). Send "
            "the page scanned as one image at 150–300 dpi, or a PDF with text."
        )


def _pdf_pages(data: bytes, limits: ScanLimits) -> list[tuple[str, list[bytes]]]:
    """Per page: its text layer and, when it has none, its embedded images (a scanned page).
    Page count, page size and each image's declared size are checked before the work."""
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentUnreadable(
                "This PDF is password-protected, so it cannot be read. "
                "Save it without a password (or print it to a new PDF) and upload that."
            )
        _check_page_count(_declared_pages(reader), limits)
        _check_page_count(len(reader.pages), limits)
        pages = []
        for number, page in enumerate(reader.pages, start=1):
            box = page.mediabox
            limits.check_page(number, abs(float(box.width)), abs(float(box.height)))
            text = page.extract_text(extraction_mode="layout") or ""
            images: list[bytes] = []
            if len(text.strip()) < MIN_TEXT_CHARS:
                _check_page_images(page, number, limits)
                images = [image.data for image in page.images]
            pages.append((text, images))
        return pages
    except DocumentUnreadable:
        raise
    except MemoryError:
        raise limits.out_of_memory() from None
    except RecursionError as exc:
        raise DocumentUnreadable(
            "This PDF nests its contents deeper than a reader follows; it is damaged or built "
            "to break readers. Print or export it to a new PDF and upload that."
        ) from exc
    except LimitReachedError as exc:
        raise DocumentUnreadable(
            f"This PDF is built past the limits a reader keeps to ({str(exc).rstrip('.')}). "
            "Print or export "
            "it to a new PDF and upload that."
        ) from exc
    except Exception as exc:  # a damaged PDF can make pypdf raise almost anything
        raise DocumentUnreadable(
            f"This file starts like a PDF but could not be read ({type(exc).__name__}). "
            "It may be damaged: export it again and upload the new file."
        ) from exc


# ------------------------------------------------------------------ images


def _skew_angle(image: Image.Image) -> float:
    """The small rotation (±6°) that makes text rows most distinct: the angle whose row-sum
    profile of dark pixels has the highest variance (photos are rarely held straight). It is
    measured on a copy at most 800 pixels a side, so its turns are small by construction."""
    import numpy as np
    from PIL import Image

    dark = np.asarray(img.small_copy(image)) < 128
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

    dark = np.asarray(img.small_copy(image)) < 128
    return bool(np.var(dark.sum(axis=0)) > 1.5 * np.var(dark.sum(axis=1)))


def _upright(image: Image.Image, limits: ScanLimits, notes: list[str]) -> tuple[Image.Image, float]:
    """The image turned upright: Tesseract's orientation detection for quarter turns (asked
    only when the page looks sideways: it costs seconds), then the projection-profile skew.
    A skew turn the limits would refuse is skipped (the page is read as it is), not refused."""
    import pytesseract

    turned = 0.0
    if _is_sideways(image):
        try:
            osd = pytesseract.image_to_osd(
                image, config="--psm 0", output_type=pytesseract.Output.DICT,
                timeout=limits.ocr_timeout,
            )  # fmt: skip
            quarter = int(osd.get("rotate", 0)) % 360
            if quarter:
                image = img.turn(image, -quarter, limits, "Turning the page upright")
                turned = float(quarter)
        except (pytesseract.TesseractError, RuntimeError, ValueError):
            pass  # too little text to tell the orientation; read it as it is
    skew = _skew_angle(image)
    if skew and not img.fits_turned(image, skew, limits):
        notes.append(f"Not straightened by {skew:+.2f}°: the turned image would be too large.")
        skew = 0.0
    if skew:
        image = img.turn(image, skew, limits, "Straightening the image")
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


def _tesseract_failed(exc: RuntimeError, limits: ScanLimits) -> DocumentUnreadable:
    """Tesseract's failure in words: its timeout, its CPU limit, or the image (under the
    memory limit Tesseract fails in several ways, none of which names memory)."""
    import pytesseract

    if not isinstance(exc, pytesseract.TesseractError):  # pytesseract's own timeout
        return DocumentUnreadable(
            f"Reading the scan took longer than {limits.ocr_timeout:.0f} seconds; "
            "send a sharper or smaller image."
        )
    if exc.status in (-signal.SIGXCPU, -signal.SIGKILL):
        return limits.out_of_cpu()
    return DocumentUnreadable(
        "OCR stopped on this image: it may be damaged, or need more than the "
        f"{limits.max_memory / 2**20:,.0f} MB of memory a scan may use "
        "(ERP_AGENT_SCAN_MAX_MEMORY_MB). Send a smaller photo or scan of the page "
        "(150–300 dpi) or a PDF with text."
    )


def _ocr(data: bytes, limits: ScanLimits, page: int, notes: list[str]) -> tuple[list[Line], float]:
    """OCR one image: lines with their lowest word confidence, and the rotation applied. Each
    step makes a new image the limits admitted first."""
    if not ocr_available():
        raise DocumentUnreadable(
            "This is an image (or a scanned PDF) and OCR is not installed on the server. "
            "An administrator can install Tesseract (Debian: apt-get install tesseract-ocr "
            "tesseract-ocr-eng) or configure a vision model; or upload a PDF with text."
        )
    image = img.decode(data, limits)
    image = img.upscale(image, limits)
    image = img.despeckle(image, limits)
    image, rotation = _upright(image, limits, notes)
    image = img.fit_for_ocr(image, limits)
    try:
        lines, mean = _read_words(image, limits.ocr_timeout)
        if mean < UPSIDE_DOWN_BELOW:  # maybe upside down: the profile cannot tell
            image = img.turn(image, 180, limits, "Turning the image upside down")
            flipped, flipped_mean = _read_words(image, limits.ocr_timeout)
            if flipped_mean > mean:
                lines, rotation = flipped, rotation + 180
    except RuntimeError as exc:  # pytesseract's errors and its timeout are RuntimeErrors
        raise _tesseract_failed(exc, limits) from exc
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


def _kind(data: bytes, limits: ScanLimits) -> str:
    limits.check_size(len(data))
    if not data:
        raise DocumentUnreadable("The file is empty: choose a PDF or an image to scan.")
    kind = sniff(data)
    if kind is None:
        raise DocumentUnreadable(
            "This file is not a PDF or an image (PNG, JPEG, TIFF, WebP, BMP, GIF). "
            "Upload the invoice or purchase order as one of those."
        )
    return kind


def extract_sync(data: bytes, limits: ScanLimits) -> Extraction:
    """Text lines from ``data`` without a model (text layer, else OCR). CPU- and memory-bound:
    the server runs it in a worker process (``erp_agent.documents.sandbox``)."""
    started = time.perf_counter()
    kind = _kind(data, limits)
    lines: list[Line] = []
    notes: list[str] = []
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
                found, turned = _ocr(image, limits, number, notes)
                lines.extend(found)
                rotation = rotation or turned
    else:
        method = "ocr"
        lines, rotation = _ocr(data, limits, 1, notes)
    _check_legible(lines)
    seconds = time.perf_counter() - started
    return Extraction(kind, method, pages, tuple(lines), rotation, seconds, tuple(notes))


def page_images(data: bytes, limits: ScanLimits) -> list[bytes]:
    """PNG bytes of each page image for a vision model: the image itself, or the images of a
    PDF's pages that have no text layer. Empty when the PDF has text (no model is needed)."""
    kind = _kind(data, limits)
    if kind == "pdf":
        raw = [item for text, images in _pdf_pages(data, limits) for item in images]
    else:
        raw = [data]
    out = []
    for item in raw:
        image = img.decode(item, limits)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


def from_transcription(text: str, kind: str, pages: int, seconds: float) -> Extraction:
    """A vision model's transcription as an Extraction (no per-word confidence)."""
    lines = _lines_from_text(text, 1, None)
    _check_legible(lines)
    return Extraction(kind, "vision", pages, tuple(lines), 0.0, seconds)
