"""A scan's heavy work (decoding, OCR, PDF parsing) in a worker process of its own.

The worker (``_worker.py``) caps its address space (``ScanLimits.max_memory``) and CPU time
(``max_cpu_seconds``) before it reads the file, and Tesseract inherits both; the sandbox stops
it, and everything it started, after ``timeout`` seconds. At most ``workers`` run at once, so
the memory all scans together can hold is ``workers × max_memory``. A file that gets past every
check in ``limits``/``images`` still costs one request: it ends as a refusal in words, never
as a server that grew until the kernel killed it with every turn in flight.

The reply is JSON (never pickle: a worker that a hostile file took over cannot make the server
run code), read up to a cap.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import logging
import os
import signal
import sys
from typing import Any

from erp_agent.documents._worker import OUTPUT_LIMIT
from erp_agent.documents.extract import Extraction, Line
from erp_agent.documents.limits import ScanLimits
from erp_agent.errors import DocumentUnreadable

log = logging.getLogger(__name__)
WORKER = "erp_agent.documents._worker"
STDERR_KEPT = 8192  # bytes of a failed worker's stderr written to the server log
# One thread each: OpenMP threads contend on a small machine (Tesseract ran 6× slower on
# two shared cores) and each thread's stack and malloc arena count against the memory cap.
_ENV = {"OMP_THREAD_LIMIT": "1", "OPENBLAS_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}


def _damaged() -> DocumentUnreadable:
    return DocumentUnreadable(
        "This file could not be read; it may be damaged. Export or photograph it again and "
        "upload it as a PDF, PNG or JPEG."
    )


def _line(raw: dict[str, Any]) -> Line:
    words = tuple((str(w), float(c)) for w, c in raw["words"])
    return Line(str(raw["text"]), raw["confidence"], int(raw["page"]), words)


def _extraction(raw: dict[str, Any]) -> Extraction:
    lines = tuple(_line(line) for line in raw["lines"])
    return Extraction(
        raw["format"], raw["method"], int(raw["pages"]), lines, float(raw["rotation"]),
        float(raw["seconds"]), tuple(str(n) for n in raw["notes"]),
    )  # fmt: skip


async def _read(stream: asyncio.StreamReader | None, cap: int) -> bytes:
    """The stream to its end, or its first ``cap`` + 1 bytes."""
    chunks, size = [], 0
    while stream is not None and size <= cap:
        chunk = await stream.read(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


async def _tail(stream: asyncio.StreamReader | None, keep: int) -> bytes:
    """The stream drained to its end (a worker blocked on a full pipe would never finish),
    keeping its last ``keep`` bytes."""
    kept = b""
    while stream is not None and (chunk := await stream.read(65536)):
        kept = (kept + chunk)[-keep:]
    return kept


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    if stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()


class Sandbox:
    """Runs ``extract_sync`` and ``page_images`` in bounded worker processes, ``workers`` at a
    time. One per runtime (it holds the slots)."""

    def __init__(self, limits: ScanLimits) -> None:
        self.limits = limits
        self._slots = asyncio.Semaphore(limits.workers)

    async def extract(self, data: bytes) -> Extraction:
        reply = await self._run("extract", data)
        return _extraction(reply["extraction"])

    async def page_images(self, data: bytes) -> list[bytes]:
        reply = await self._run("page-images", data)
        return [base64.b64decode(png) for png in reply["images"]]

    async def _run(self, job: str, data: bytes) -> dict[str, Any]:
        self.limits.check_size(len(data))
        async with self._slots:
            reply = await self._spawn(job, data)
        if "refused" in reply:
            raise DocumentUnreadable(str(reply["refused"]))
        return reply

    async def _spawn(self, job: str, data: bytes) -> dict[str, Any]:
        limits = json.dumps(dataclasses.asdict(self.limits))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", WORKER, job, limits,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={**os.environ, **_ENV},
            start_new_session=True,  # its own process group: stopping it stops Tesseract too
        )  # fmt: skip
        feeding = asyncio.ensure_future(_feed(process.stdin, data))
        errors = asyncio.ensure_future(_tail(process.stderr, STDERR_KEPT))
        try:
            async with asyncio.timeout(self.limits.timeout):
                out = await _read(process.stdout, OUTPUT_LIMIT)
                if len(out) > OUTPUT_LIMIT:
                    raise _damaged()
                code = await process.wait()
                err = await errors
        except TimeoutError:
            raise self.limits.out_of_time() from None
        finally:
            # The whole group, even after the worker ended: a Tesseract it left running keeps
            # the group (and so its id) alive; an empty group is ProcessLookupError.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            if process.stdin is not None:
                process.stdin.close()
            for task in (feeding, errors):
                task.cancel()
            await asyncio.gather(feeding, errors, return_exceptions=True)
        return self._reply(code, out, err)

    def _reply(self, code: int, out: bytes, err: bytes) -> dict[str, Any]:
        if code == 0:
            try:
                reply = json.loads(out)
            except ValueError:
                reply = None
            if isinstance(reply, dict):
                return reply
        tail = err[-STDERR_KEPT:].decode("utf-8", "replace")
        log.warning("scan worker ended with %s: %s", code, tail.strip() or "(no output)")
        if code == -signal.SIGXCPU:
            raise self.limits.out_of_cpu()
        if code == -signal.SIGKILL or b"MemoryError" in err or b"bad_alloc" in err:
            raise self.limits.out_of_memory()  # SIGKILL from outside: the kernel's OOM killer
        raise _damaged()
