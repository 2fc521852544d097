"""Create, seed and serve a Tryton database in a folder of its own (SQLite).

Every step runs Tryton's own programs in a child process (``trytond-admin`` to create the
database and activate the modules, proteus to seed, ``trytond`` to serve), so nothing of
trytond's process-wide state reaches the caller. A seeded folder is complete only once its
``seeded.json`` exists; a half-built one is started over.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DATABASE = "erp"
MODULES = ("sale", "purchase", "account_invoice_stock")
_ADMIN_PASSWORD = "admin-Pass-2026"


def _version() -> str:
    from importlib.metadata import version

    return f"{version('trytond')}-{'-'.join(MODULES)}"


class TrytonError(RuntimeError):
    """A Tryton program failed; the message carries the end of its output."""


def available() -> bool:
    """Whether trytond and the modules the demo needs are installed (the ``tryton`` extra)."""
    try:
        import trytond  # noqa: F401
        from trytond.modules import sale  # noqa: F401
    except ImportError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(folder: Path, port: int) -> Path:
    path = folder / "trytond.conf"
    path.write_text(
        "[database]\n"
        "uri = sqlite://\n"
        f"path = {folder / 'db'}\n"
        "[web]\n"
        f"listen = 127.0.0.1:{port}\n"
        "[password]\n"
        "length = 4\n"
        "[session]\n"
        "max_attempt = 1000\n"  # the tests sign in many times from one address
        "[request]\n"
        "max_size_authenticated = 20000000\n"
        "[queue]\n"
        "worker = False\n",
        encoding="utf-8",
    )
    return path


def _bin(name: str) -> str:
    found = Path(sys.executable).parent / name
    if found.exists():
        return str(found)
    which = shutil.which(name)
    if which is None:
        raise TrytonError(
            f"{name} is not installed. Install Tryton with the project's optional group: "
            "uv sync --extra tryton"
        )
    return which


def _run(command: list[str], env: dict[str, str] | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-3000:]
        raise TrytonError(f"{Path(command[0]).name} failed:\n{tail}")


@dataclass
class Built:
    folder: Path
    timings: dict[str, float]
    summary: dict[str, object]


def build(
    folder: Path, *, seed: int = 7, today: dt.date | None = None, reuse: bool = False
) -> Built:
    """A seeded database in ``folder``, reused when already complete for this seed and date
    (with ``reuse``: whatever complete build is there, as a demo's second start does)."""
    today = today or dt.date.today()
    marker = folder / "seeded.json"
    if marker.exists():
        data = json.loads(marker.read_text(encoding="utf-8"))
        if reuse or (data.get("seed") == seed and data.get("today") == today.isoformat()):
            return Built(folder, data.get("timings", {}), data.get("summary", {}))
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "db").mkdir(parents=True)
    conf = _config(folder, 0)
    (folder / "db" / f"{DATABASE}.sqlite").touch()  # the SQLite backend opens an existing file
    (folder / "admin.pass").write_text(_ADMIN_PASSWORD + "\n", encoding="utf-8")
    env = {**os.environ, "TRYTONPASSFILE": str(folder / "admin.pass")}
    timings: dict[str, float] = {}
    started = time.monotonic()
    activated = folder.parent / f"activated-{_version()}.sqlite"  # shared by every seed
    if activated.exists():
        shutil.copyfile(activated, folder / "db" / f"{DATABASE}.sqlite")
    else:
        _run([_bin("trytond-admin"), "-c", str(conf), "-d", DATABASE, "--email",
              "admin@example.com", "--activate-dependencies", "-u", *MODULES], env)  # fmt: skip
        shutil.copyfile(folder / "db" / f"{DATABASE}.sqlite", activated)
    timings["activate"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    summary_file = folder / "summary.json"
    _run([sys.executable, "-m", "demo_erp.tryton", "seed-into", str(conf), DATABASE,
          "--seed", str(seed), "--today", today.isoformat(), "--summary", str(summary_file)])  # fmt: skip
    timings["seed"] = round(time.monotonic() - started, 1)
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    marker.write_text(
        json.dumps({"seed": seed, "today": today.isoformat(), "timings": timings,
                    "summary": summary}, indent=1),
        encoding="utf-8",
    )  # fmt: skip
    return Built(folder, timings, summary)


class Server:
    """``trytond`` serving a built folder on a free loopback port, until ``stop``."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        conf = _config(folder, self.port)
        self.log = open(folder / "trytond.log", "ab")  # noqa: SIM115 - closed in stop()
        # -d: without it the first login of a fresh process answers "'res.user'" (trytond 8.2).
        self.process = subprocess.Popen(
            [_bin("trytond"), "-c", str(conf), "-d", DATABASE],
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}"

    def wait(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        body = json.dumps({"id": 0, "method": "common.server.version", "params": []}).encode()
        probe = f"{self.url}/rpc/"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise TrytonError(f"trytond stopped: see {self.folder / 'trytond.log'}")
            try:
                req = urllib.request.Request(probe, body, {"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=2):
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise TrytonError(f"trytond did not answer on {self.url} within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
