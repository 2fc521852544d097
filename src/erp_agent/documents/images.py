"""Every image transformation a scan makes: decode, enlarge, clean, turn, shrink. Each one
computes the size of what it will make and has the limits admit it before it allocates, so
no file can ask for more pixels or memory than ``ScanLimits`` allows (a 1 KB PNG of 10⁶×1
pixels once grew, through an OCR upscale and a deskew, to 10¹¹ pixels).
"""

from __future__ import annotations

import io
import math
import warnings
from typing import TYPE_CHECKING

from erp_agent.documents.limits import ScanLimits, pixel_bytes
from erp_agent.errors import DocumentUnreadable

if TYPE_CHECKING:
    from PIL import Image

OCR_TARGET_WIDTH = 2000  # small photos are enlarged to about this width before OCR
TESSERACT_MAX_SIDE = 32_000  # Tesseract refuses an image with a side over 32,767 pixels
SMALL_SIDE = 800  # the working copy the skew and orientation are measured on
_ORIENTATION = 0x0112  # the EXIF tag a camera records its orientation in
# What a scan is decoded as (uploads, and the images pypdf takes out of a PDF's pages); never
# a format whose plugin runs a program (EPS runs Ghostscript).
_FORMATS = ("PNG", "JPEG", "TIFF", "BMP", "GIF", "WEBP", "JPEG2000")


def _held(image: Image.Image) -> int:
    return image.width * image.height * pixel_bytes(image.mode)


def _damaged() -> DocumentUnreadable:
    return DocumentUnreadable(
        "This image could not be opened; it may be damaged. Send it again as PNG or JPEG."
    )


def decode(data: bytes, limits: ScanLimits, what: str = "The image") -> Image.Image:
    """``data`` as a grey-scale image the right way up (per its EXIF orientation). The header's
    size is checked before a pixel is decoded."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            # Pillow warns from 89 megapixels; the limits below decide, in words.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=_FORMATS)
    except Image.DecompressionBombError as exc:
        raise DocumentUnreadable(
            f"{what} claims to be far over the {limits.max_pixels / 1_000_000:.0f} megapixels a "
            "scan decodes (ERP_AGENT_SCAN_MAX_PIXELS); it may be a decompression bomb. "
            "Send a photo or scan of the page itself."
        ) from exc
    except MemoryError:
        raise limits.out_of_memory() from None
    except Exception as exc:  # a damaged header can make Pillow raise almost anything
        raise _damaged() from exc
    width, height = image.size
    limits.check_shape(width, height, what)
    if image.format == "JPEG":
        image.draft("L", image.size)  # decode straight to grey: no colour copy is made
    limits.admit(width, height, image.mode, "Decoding the image")
    try:
        image.load()
        orientation = image.getexif().get(_ORIENTATION)
    except MemoryError:
        raise limits.out_of_memory() from None
    except Exception as exc:  # truncated or corrupt pixel data
        raise _damaged() from exc
    grey: Image.Image = image
    if image.mode != "L":
        limits.admit(width, height, "L", "Turning the image grey", _held(image))
        grey = image.convert("L")
    return _exif_upright(grey, orientation, limits)


def _exif_upright(image: Image.Image, orientation: object, limits: ScanLimits) -> Image.Image:
    from PIL import Image

    method = {
        2: Image.Transpose.FLIP_LEFT_RIGHT,
        3: Image.Transpose.ROTATE_180,
        4: Image.Transpose.FLIP_TOP_BOTTOM,
        5: Image.Transpose.TRANSPOSE,
        6: Image.Transpose.ROTATE_270,
        7: Image.Transpose.TRANSVERSE,
        8: Image.Transpose.ROTATE_90,
    }.get(orientation if isinstance(orientation, int) else 1)
    if method is None:
        return image
    width, height = image.size
    if orientation in (5, 6, 7, 8):
        width, height = height, width
    limits.admit(width, height, image.mode, "Turning the image upright", _held(image))
    return image.transpose(method)


def upscale(image: Image.Image, limits: ScanLimits) -> Image.Image:
    """A small photo enlarged to about ``OCR_TARGET_WIDTH``, by a factor that keeps it inside
    the pixel limit and Tesseract's largest side (a narrow strip is not stretched to billions
    of pixels keeping its aspect)."""
    from PIL import Image

    width, height = image.size
    if width >= OCR_TARGET_WIDTH * 0.6:
        return image
    factor = min(
        OCR_TARGET_WIDTH / width,
        math.sqrt(limits.max_pixels / (width * height)),
        TESSERACT_MAX_SIDE / max(width, height),
    )
    if factor < 1.05:
        return image
    size = (max(1, int(width * factor)), max(1, int(height * factor)))
    limits.admit(*size, image.mode, "Enlarging the image for OCR", _held(image))
    return image.resize(size, Image.Resampling.LANCZOS)


def despeckle(image: Image.Image, limits: ScanLimits) -> Image.Image:
    """Speckle noise breaks digits apart: a 3×3 median filter (a copy of the same size)."""
    from PIL import ImageFilter

    limits.admit(*image.size, image.mode, "Cleaning the image", _held(image))
    return image.filter(ImageFilter.MedianFilter(3))


def turned_size(width: int, height: int, degrees: float) -> tuple[int, int]:
    """The size of a ``width``×``height`` image turned ``degrees`` with its corners kept."""
    if degrees % 90 == 0:
        return (height, width) if degrees % 180 else (width, height)
    cos, sin = abs(math.cos(math.radians(degrees))), abs(math.sin(math.radians(degrees)))
    return math.ceil(width * cos + height * sin) + 1, math.ceil(width * sin + height * cos) + 1


def fits_turned(image: Image.Image, degrees: float, limits: ScanLimits) -> bool:
    """Whether ``turn(image, degrees)`` would be admitted."""
    try:
        limits.admit(*turned_size(*image.size, degrees), image.mode, "", _held(image))
    except DocumentUnreadable:
        return False
    return True


def turn(image: Image.Image, degrees: float, limits: ScanLimits, what: str) -> Image.Image:
    """``image`` turned ``degrees`` counter-clockwise, grown to keep its corners, white behind.
    A skew turn of a long strip grows it most: 6° on 1,000×30,000 pixels is 4×."""
    limits.admit(*turned_size(*image.size, degrees), image.mode, what, _held(image))
    return image.rotate(degrees, expand=True, fillcolor=255)


def fit_for_ocr(image: Image.Image, limits: ScanLimits) -> Image.Image:
    """``image`` shrunk, if need be, to the largest side Tesseract reads."""
    from PIL import Image

    side = max(image.size)
    if side <= TESSERACT_MAX_SIDE:
        return image
    factor = TESSERACT_MAX_SIDE / side
    size = (max(1, int(image.width * factor)), max(1, int(image.height * factor)))
    limits.admit(*size, image.mode, "Shrinking the image for OCR", _held(image))
    return image.resize(size, Image.Resampling.LANCZOS)


def small_copy(image: Image.Image) -> Image.Image:
    """A copy at most ``SMALL_SIDE`` a side (what ``thumbnail`` makes, without first copying
    the whole image): the skew and orientation are measured on it."""
    from PIL import Image

    width, height = image.size
    scale = SMALL_SIDE / max(width, height)
    if scale >= 1:
        return image.copy()
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return image.resize(size, Image.Resampling.BICUBIC, reducing_gap=2.0)
