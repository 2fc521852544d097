"""What one scan may cost, and the checks that refuse a file before the work that would exceed it.

Two layers: every image the scan decodes or makes is admitted first (pixels, shape and the
memory the operation holds), so a cheap file cannot ask for a huge allocation; and the whole
scan runs in a worker process under an address-space and a CPU-time limit
(``erp_agent.documents.sandbox``), so whatever the checks miss costs that one request.
Every refusal says what is wrong and what to send instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from erp_agent.errors import DocumentUnreadable

MB = 1_000_000
MIN_SIDE = 16  # pixels: an image narrower than this holds no legible line of text
MAX_PAGE_POINTS = 14_400  # the largest page side PDF readers draw (200 in, ISO 32000 annex C)
WORKER_BASE = 192 * 2**20  # the scan worker with its libraries loaded (measured: 170 MB)
IMAGE_SHARE = 0.5  # of the worker's memory beyond that, what one image operation may hold
_SEND = "Send a photo or scan of the page itself (150–300 dpi, cropped to the paper) or a PDF."


def pixel_bytes(mode: str) -> int:
    """Bytes Pillow keeps per pixel in ``mode`` (three-band images are stored in four)."""
    if mode in ("1", "L", "P"):
        return 1
    if mode.startswith("I;16"):
        return 2
    return 4


@dataclass(frozen=True)
class ScanLimits:
    """What a scan may cost; over a limit the file is refused before the heavy work."""

    max_bytes: int = 20_000_000
    max_pages: int = 20
    max_pixels: int = 60_000_000
    ocr_timeout: float = 60.0
    max_aspect: float = 30.0
    max_memory: int = 1024 * 2**20  # the worker's address space, bytes
    max_cpu_seconds: int = 120
    timeout: float = 300.0
    workers: int = 2

    @property
    def image_bytes(self) -> int:
        """What one image operation may hold, its input and output together."""
        return int(max(self.max_memory - WORKER_BASE, 0) * IMAGE_SHARE)

    def check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise DocumentUnreadable(
                f"The file is {size / MB:.1f} MB; the limit is "
                f"{self.max_bytes / MB:.0f} MB. Send a smaller scan or a PDF "
                "(ERP_AGENT_SCAN_MAX_BYTES raises the limit)."
            )

    def check_shape(self, width: int, height: int, what: str = "The image") -> None:
        """A decoded image's (or a PDF image's declared) size: not empty, not a sliver, not
        stretched past ``max_aspect``, not over ``max_pixels``."""
        if width <= 0 or height <= 0:
            raise DocumentUnreadable(f"{what} is {width}×{height} pixels: it is empty. {_SEND}")
        if min(width, height) < MIN_SIDE:
            raise DocumentUnreadable(
                f"{what} is {width}×{height} pixels; a side under {MIN_SIDE} pixels cannot hold "
                f"a legible line of text. {_SEND}"
            )
        ratio = max(width, height) / min(width, height)
        if ratio > self.max_aspect:
            raise DocumentUnreadable(
                f"{what} is {width}×{height} pixels, {ratio:,.0f} times longer than it is wide; "
                f"scans are read up to {self.max_aspect:g}:1 (ERP_AGENT_SCAN_MAX_ASPECT). {_SEND}"
            )
        if width * height > self.max_pixels:
            raise DocumentUnreadable(
                f"{what} is {width}×{height} pixels; the limit is "
                f"{self.max_pixels / MB:.0f} megapixels (ERP_AGENT_SCAN_MAX_PIXELS). "
                "Send a smaller photo."
            )

    def admit(self, width: int, height: int, mode: str, what: str, held: int = 0) -> None:
        """Before an operation allocates a ``width``×``height`` image in ``mode``: refused when
        it is over the pixel limit, or when it and the ``held`` bytes it reads from together
        are over the memory one image operation may hold."""
        pixels = width * height
        need = pixels * pixel_bytes(mode) + held
        if pixels > self.max_pixels:
            raise DocumentUnreadable(
                f"{what} would make a {width}×{height} pixel image, over the "
                f"{self.max_pixels / MB:.0f} megapixels a scan may use "
                f"(ERP_AGENT_SCAN_MAX_PIXELS). {_SEND}"
            )
        if need > self.image_bytes:
            raise DocumentUnreadable(
                f"{what} would hold {need / MB:,.0f} MB ({width}×{height} pixels), over the "
                f"{self.image_bytes / MB:,.0f} MB one step of a scan may use "
                f"(ERP_AGENT_SCAN_MAX_MEMORY_MB). {_SEND}"
            )

    def check_page(self, number: int, width: float, height: float) -> None:
        """A PDF page's box, in points: a page a reader could draw, of a paper's proportions."""
        if not (0 < width <= MAX_PAGE_POINTS and 0 < height <= MAX_PAGE_POINTS):
            raise DocumentUnreadable(
                f"Page {number} of this PDF is {width:,.0f}×{height:,.0f} points; a page is at "
                f"most {MAX_PAGE_POINTS:,} points (200 inches) a side. {_SEND}"
            )
        ratio = max(width, height) / min(width, height)
        if ratio > self.max_aspect:
            raise DocumentUnreadable(
                f"Page {number} of this PDF is {width:,.0f}×{height:,.0f} points, {ratio:,.0f} "
                f"times longer than it is wide; pages are read up to {self.max_aspect:g}:1 "
                f"(ERP_AGENT_SCAN_MAX_ASPECT). {_SEND}"
            )

    def out_of_memory(self) -> DocumentUnreadable:
        return DocumentUnreadable(
            f"Reading this file needed more than {self.max_memory / 2**20:,.0f} MB of memory, "
            "the limit for one scan (ERP_AGENT_SCAN_MAX_MEMORY_MB); nothing was read or "
            f"written. {_SEND}"
        )

    def out_of_cpu(self) -> DocumentUnreadable:
        return DocumentUnreadable(
            f"Reading this file took more than {self.max_cpu_seconds} second"
            f"{'s' * (self.max_cpu_seconds != 1)} of processor time, "
            "the limit for one scan (ERP_AGENT_SCAN_MAX_CPU_SECONDS); nothing was read or "
            f"written. {_SEND}"
        )

    def out_of_time(self) -> DocumentUnreadable:
        return DocumentUnreadable(
            f"Reading this file took longer than {self.timeout:g} seconds, the limit for one "
            "scan (ERP_AGENT_SCAN_TIMEOUT); nothing was read or written. Send a smaller image, "
            "fewer pages or a PDF with text."
        )
