"""Each image transformation a scan makes is admitted by the limits before it allocates: the
Pillow or pypdf call that would allocate is replaced by one that fails the test, so a check
that came after the allocation (or not at all) cannot pass."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from bad_scans import bomb_png, form_fanout_pdf, image_pdf, png, wide_page_pdf
from PIL import Image

from erp_agent.documents import extract, images
from erp_agent.documents.extract import extract_sync
from erp_agent.documents.limits import WORKER_BASE, ScanLimits
from erp_agent.errors import DocumentUnreadable

MiB = 2**20
LIMITS = ScanLimits()
# One image step may hold 2 MB: big enough to open a small test image, too small for more.
TIGHT = ScanLimits(max_memory=WORKER_BASE + 4 * MiB)

Forbid = Callable[[object, str], None]


@pytest.fixture
def forbid(monkeypatch: pytest.MonkeyPatch) -> Forbid:
    """``forbid(owner, name)``: calling ``owner.name`` fails the test (it would allocate)."""

    def apply(owner: object, name: str) -> None:
        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError(f"{name} ran: the allocation was not refused first")

        monkeypatch.setattr(owner, name, refuse)

    return apply


def grey(width: int, height: int) -> Image.Image:
    return Image.new("L", (width, height), 255)


# ------------------------------------------------------------------ decode


@pytest.mark.parametrize(
    ("width", "height", "words"),
    [
        (1_000_000, 1, "a side under 16 pixels"),
        (1, 1_000_000, "a side under 16 pixels"),
        (40_000, 1_000, "40 times longer than it is wide"),
        (9_000, 9_000, "the limit is 60 megapixels"),
    ],
)
def test_decode_refuses_a_shape_before_the_pixels_are_read(
    forbid: Forbid, width: int, height: int, words: str
) -> None:
    data = png(width, height)
    assert len(data) < 100_000  # cheap to send: white pixels compress to almost nothing
    forbid(Image.Image, "load")
    with pytest.raises(DocumentUnreadable, match=words):
        images.decode(data, LIMITS)


def test_decode_refuses_a_header_claiming_ten_billion_pixels(forbid: Forbid) -> None:
    forbid(Image.Image, "load")
    with pytest.raises(DocumentUnreadable, match="decompression bomb"):
        images.decode(bomb_png(100_000, 100_000), LIMITS)


def test_decode_refuses_what_the_memory_limit_cannot_hold(forbid: Forbid) -> None:
    forbid(Image.Image, "load")
    with pytest.raises(DocumentUnreadable, match=r"Decoding the image would hold .* over the 2 MB"):
        images.decode(png(2_000, 2_000), TIGHT)


def test_decode_refuses_a_colour_to_grey_copy_over_the_limit(forbid: Forbid) -> None:
    # 700×700 RGB is 1.96 MB to decode (Pillow keeps four bytes a pixel); the grey copy beside
    # it would pass 2 MB.
    buffer = io.BytesIO()
    Image.new("RGB", (700, 700), "white").save(buffer, format="PNG")
    forbid(Image.Image, "convert")
    with pytest.raises(DocumentUnreadable, match="Turning the image grey"):
        images.decode(buffer.getvalue(), TIGHT)


# ------------------------------------------------------------------ upscale


def test_upscale_refuses_before_it_resizes(forbid: Forbid) -> None:
    forbid(Image.Image, "resize")
    with pytest.raises(DocumentUnreadable, match="Enlarging the image for OCR"):
        images.upscale(grey(600, 800), TIGHT)


def test_a_narrow_strip_is_enlarged_within_the_limits_not_to_its_aspect() -> None:
    """The finding: OCR enlarged narrow images to 2,000 pixels wide keeping the aspect
    (1 pixel wide and 10⁶ high became 2·10⁹ pixels). The factor now stops at the limits."""
    strip = grey(20, 600)  # 30:1, the most the limits let through
    limits = ScanLimits(max_pixels=2_000_000)
    enlarged = images.upscale(strip, limits)
    assert enlarged.width * enlarged.height <= limits.max_pixels
    assert enlarged.width > strip.width  # still enlarged, as far as the limits allow


def test_upscale_stops_at_the_largest_side_tesseract_reads() -> None:
    enlarged = images.upscale(grey(1_000, 30_000), LIMITS)
    assert max(enlarged.size) <= images.TESSERACT_MAX_SIDE


# ------------------------------------------------------------------ clean, turn, shrink


def test_despeckle_refuses_before_it_filters(forbid: Forbid) -> None:
    forbid(Image.Image, "filter")
    with pytest.raises(DocumentUnreadable, match="Cleaning the image"):
        images.despeckle(grey(1_100, 1_100), TIGHT)


def test_a_turn_refuses_before_it_rotates(forbid: Forbid) -> None:
    """Turned 6° with its corners kept, a 1,000×30,000 strip becomes about 4,130×29,940
    pixels: four times the pixels, over the limit although the strip is within it."""
    assert images.turned_size(1_000, 30_000, 6.0)[0] > 4_000
    forbid(Image.Image, "rotate")
    with pytest.raises(DocumentUnreadable, match="Straightening the image would make"):
        images.turn(
            grey(1_000, 30_000), 6.0, ScanLimits(max_pixels=60_000_000), "Straightening the image"
        )
    with pytest.raises(DocumentUnreadable, match="Turning the page upright"):
        images.turn(grey(1_100, 1_100), 90, TIGHT, "Turning the page upright")


def test_a_skew_turn_over_the_limits_is_skipped_not_refused(
    forbid: Forbid, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extract, "_skew_angle", lambda image: 6.0)
    monkeypatch.setattr(extract, "_is_sideways", lambda image: False)
    forbid(Image.Image, "rotate")
    notes: list[str] = []
    strip = grey(1_000, 30_000)
    upright, rotation = extract._upright(strip, LIMITS, notes)
    assert upright is strip
    assert rotation == 0.0
    assert len(notes) == 1
    assert "too large" in notes[0]


def test_shrinking_for_ocr_refuses_before_it_resizes(forbid: Forbid) -> None:
    tall = grey(40, 33_000)
    assert max(images.fit_for_ocr(tall, LIMITS).size) <= images.TESSERACT_MAX_SIDE
    forbid(Image.Image, "resize")
    with pytest.raises(DocumentUnreadable, match="Shrinking the image for OCR"):
        images.fit_for_ocr(grey(100, 33_000), ScanLimits(max_memory=WORKER_BASE + 2 * MiB))


def test_the_measuring_copy_is_small_without_copying_the_whole_image(forbid: Forbid) -> None:
    forbid(Image.Image, "copy")
    small = images.small_copy(grey(3_000, 9_000))
    assert max(small.size) <= images.SMALL_SIDE


# ------------------------------------------------------------------ PDF pages


def test_a_pdf_image_is_admitted_by_its_declared_size_before_pypdf_decodes_it(
    forbid: Forbid,
) -> None:
    import pypdf.generic._image_xobject as xobject

    forbid(xobject, "_xobj_to_image")
    with pytest.raises(DocumentUnreadable, match=r"An image on page 1 is 100000×100000 pixels"):
        extract_sync(image_pdf(100_000, 100_000), LIMITS)
    with pytest.raises(DocumentUnreadable, match="60000×100 pixels, 600 times longer"):
        extract_sync(image_pdf(60_000, 100), LIMITS)
    with pytest.raises(DocumentUnreadable, match="Decoding an image on page 1 would hold"):
        extract_sync(image_pdf(2_000, 2_000), TIGHT)
    # A form drawing a form ten times, six deep: a million 16×16 images from 2 KB.
    with pytest.raises(DocumentUnreadable, match="draws more than 500 images and forms"):
        extract_sync(form_fanout_pdf(10, 6), LIMITS)


def test_a_pdf_page_too_long_for_paper_is_refused_before_its_text_is_laid_out(
    forbid: Forbid,
) -> None:
    from pypdf import PageObject

    forbid(PageObject, "extract_text")
    with pytest.raises(DocumentUnreadable, match=r"Page 1 of this PDF is 14,000×10 points"):
        extract_sync(wide_page_pdf(), LIMITS)
