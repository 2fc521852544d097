#!/usr/bin/env python3
"""Install uv, erp-agent's package manager, for this user: no pip, no root, no virtual
environment, and nothing changed in the system's Python.

    python3 scripts/get-uv.py            # uv 0.13.9 into ~/.local/bin
    python3 scripts/get-uv.py --dir DIR  # or into DIR

Debian 12 and Ubuntu 24.04 refuse `pip install` into their own Python ("externally managed
environment"), and ship it without pip or venv. This script needs only the standard library: it
downloads uv's wheel for this machine from the package index (PyPI, or the mirror named by
UV_INDEX_URL or PIP_INDEX_URL), checks it against the SHA-256 pinned below, and copies the `uv`
and `uvx` programs out of it. `uv run` then makes the project's own environment in `.venv`.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import io
import json
import os
import platform
import stat
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

VERSION = "0.13.9"
# The wheels of uv 0.13.9 on PyPI and their SHA-256, by (system, machine).
WHEELS = {
    ("Linux", "x86_64"): (
        "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19",
    ),
    ("Linux", "aarch64"): (
        "uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
        "5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe",
    ),
    ("Darwin", "x86_64"): (
        "uv-0.13.9-py3-none-macosx_10_12_x86_64.whl",
        "c16ed11e013557536b3e60065f1b912f6407bd6518e041b961e23ef9e6b4fbf5",
    ),
    ("Darwin", "arm64"): (
        "uv-0.13.9-py3-none-macosx_11_0_arm64.whl",
        "66c512266d633bef48384a1f53003f41f2a8e7b36fe6e7fbfd3e0fd52d96fa63",
    ),
}
PROGRAMS = ("uv", "uvx")
TIMEOUT = 60


class _Links(html.parser.HTMLParser):
    """The file links of a PEP 503 (HTML) project page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[str, str] = {}
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        if self._href is not None and data.strip():
            self.links[data.strip()] = self._href
            self._href = None


def _wheel_url(index: str, filename: str) -> str:
    page = index.rstrip("/") + "/uv/"
    accept = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
    request = urllib.request.Request(page, headers={"Accept": accept})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:
        body = reply.read()
        kind = reply.headers.get("Content-Type", "")
        where = reply.geturl()
    if "json" in kind:
        files = {f["filename"]: f["url"] for f in json.loads(body)["files"]}
    else:
        parser = _Links()
        parser.feed(body.decode("utf-8", "replace"))
        files = parser.links
    if filename not in files:
        raise SystemExit(f"{page} does not list {filename}: is the index a mirror of PyPI?")
    return urllib.parse.urljoin(where, files[filename])


def _installed(target: Path) -> bool:
    try:
        done = subprocess.run(
            [str(target), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return False
    return done.returncode == 0 and done.stdout.split()[1:2] == [VERSION]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dir", type=Path, default=Path.home() / ".local" / "bin", help="where uv goes"
    )
    folder: Path = parser.parse_args().dir.expanduser()
    key = (platform.system(), platform.machine())  # ("Linux", "x86_64"), ("Darwin", "arm64")…
    if key not in WHEELS:
        raise SystemExit(
            f"No pinned uv wheel for {key[0]} {key[1]}: install uv {VERSION} another way "
            "(https://docs.astral.sh/uv/getting-started/installation/), e.g. "
            f"`pipx install uv=={VERSION}`."
        )
    target = folder / "uv"
    if _installed(target):
        print(f"uv {VERSION} is already in {target}")
    else:
        filename, sha256 = WHEELS[key]
        index = os.environ.get("UV_INDEX_URL") or os.environ.get("PIP_INDEX_URL")
        url = _wheel_url(index or "https://pypi.org/simple", filename)
        print(f"downloading {filename} …", flush=True)
        with urllib.request.urlopen(url, timeout=TIMEOUT) as reply:
            wheel = reply.read()
        found = hashlib.sha256(wheel).hexdigest()
        if found != sha256:
            raise SystemExit(f"{filename}: SHA-256 {found}, expected {sha256}; nothing installed")
        folder.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
            for program in PROGRAMS:
                data = archive.read(f"uv-{VERSION}.data/scripts/{program}")
                # Written beside the target and renamed: a running uv is never half-replaced.
                with tempfile.NamedTemporaryFile(dir=folder, delete=False) as temporary:
                    temporary.write(data)
                mode = stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
                os.chmod(temporary.name, mode)
                os.replace(temporary.name, folder / program)
        if not _installed(target):
            raise SystemExit(f"{target} was written but does not run on this machine")
        print(f"uv {VERSION} installed in {target}")
    on_path = any(Path(p).resolve() == folder.resolve() for p in os.get_exec_path() if p)
    if not on_path:
        print(f"{folder} is not on your PATH: run {target} (or add {folder} to PATH).")


if __name__ == "__main__":
    sys.exit(main())
