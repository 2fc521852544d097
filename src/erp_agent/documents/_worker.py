"""The scan worker: ``python -m erp_agent.documents._worker JOB LIMITS`` reads one file from
stdin and writes one JSON reply to stdout. Run by ``erp_agent.documents.sandbox`` only.

It caps its own address space, CPU time and core dumps before it looks at the file, so the
limits hold for everything it runs (Tesseract inherits them); a file that breaks a decoder
costs this process, never the server.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import resource
import sys
from collections.abc import Callable
from typing import Any

from erp_agent.documents.extract import Extraction, extract_sync, page_images
from erp_agent.documents.limits import ScanLimits
from erp_agent.errors import DocumentUnreadable

OUTPUT_LIMIT = 64 * 2**20  # bytes of reply; the sandbox reads no more
CPU_GRACE = 5  # seconds between the CPU limit's SIGXCPU and its SIGKILL


def confine(limits: ScanLimits) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limits.max_memory, limits.max_memory))
    cpu = limits.max_cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + CPU_GRACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _extraction(data: bytes, limits: ScanLimits) -> dict[str, Any]:
    found: Extraction = extract_sync(data, limits)
    return {"extraction": dataclasses.asdict(found)}


def _images(data: bytes, limits: ScanLimits) -> dict[str, Any]:
    pngs = page_images(data, limits)
    return {"images": [base64.b64encode(png).decode("ascii") for png in pngs]}


JOBS: dict[str, Callable[[bytes, ScanLimits], dict[str, Any]]] = {
    "extract": _extraction,
    "page-images": _images,
}


def run(job: str, data: bytes, limits: ScanLimits) -> bytes:
    try:
        reply = JOBS[job](data, limits)
    except DocumentUnreadable as exc:
        reply = {"refused": str(exc)}
    except MemoryError:
        reply = {"refused": str(limits.out_of_memory())}
    out = json.dumps(reply, ensure_ascii=False).encode("utf-8")
    if len(out) > OUTPUT_LIMIT:
        refused = (
            "This file holds far more text than an invoice or order; upload only the document."
        )
        out = json.dumps({"refused": refused}).encode("utf-8")
    return out


def _preload() -> None:
    """The libraries a scan may need, loaded before the limits apply: what then runs out of
    memory is the file's work, never an import (which would read as a damaged file)."""
    # pytesseract imports pandas when it is installed (0.6 s and 60 MB a scan) only to offer
    # DataFrame output, which is never asked for here.
    sys.modules.setdefault("pandas", None)  # type: ignore[arg-type]
    import numpy  # noqa: F401
    import pypdf  # noqa: F401
    import pytesseract  # noqa: F401
    from PIL import Image, ImageFilter, PngImagePlugin  # noqa: F401


def main() -> None:
    job, raw = sys.argv[1], sys.argv[2]
    limits = ScanLimits(**json.loads(raw))
    data = sys.stdin.buffer.read()  # the sandbox sends at most limits.max_bytes
    _preload()
    confine(limits)
    sys.stdout.buffer.write(run(job, data, limits))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
