"""A real trytond for the tests: built once (create the database, activate the modules, seed
it through proteus), kept in a cache folder keyed by trytond's version, the seed and the date,
copied for each test session and served on a free loopback port.

``TrytonRPC`` is the independent side of every check: a plain JSON-RPC client written here,
not the connector under test, asking Tryton in its own terms (model, native fields, domain).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import TEST_TODAY

SEED = 7
PASSWORD = "demo"


def _cache() -> Path:
    """The built database's folder, named by everything that shapes it (trytond's version, the
    seed code, the seed and the date), so a changed seed is never served from an old build."""
    import hashlib
    from importlib.metadata import version

    import demo_erp.tryton.seed as seed_code

    root = os.environ.get(
        "ERP_AGENT_TRYTON_CACHE", Path(tempfile.gettempdir()) / "erp-agent-tryton"
    )
    code = hashlib.sha256(Path(seed_code.__file__).read_bytes()).hexdigest()[:12]
    return Path(root) / f"trytond-{version('trytond')}-{code}-seed{SEED}-{TEST_TODAY.isoformat()}"


@dataclass(frozen=True)
class Tryton:
    url: str  # trytond's base URL (the connector's ERP_AGENT_ERP_URL)
    database: str
    folder: Path


def _decode(obj: dict[str, Any]) -> Any:
    if obj.get("__class__") == "Decimal":
        return Decimal(obj["decimal"])
    if obj.get("__class__") == "date":
        return f"{obj['year']:04d}-{obj['month']:02d}-{obj['day']:02d}"
    return obj


class TrytonRPC:
    """Tryton's JSON-RPC as one user, with nothing of the connector."""

    def __init__(self, tryton: Tryton, login: str, password: str = PASSWORD) -> None:
        self.url = f"{tryton.url}/{tryton.database}/rpc/"
        result = self._post("common.db.login", [login, {"password": password}, "en"], None)
        raw = f"{login}:{result[0]}:{result[1]}".encode()
        self.auth = "Session " + base64.b64encode(raw).decode()
        prefs = self._post("model.res.user.get_preferences", [True, {}], self.auth)
        self.context = {k: v for k, v in prefs.items() if "." not in k and k != "locale"}

    def _post(self, method: str, params: list[Any], auth: str | None) -> Any:
        headers = {"Authorization": auth} if auth else {}
        body = {"id": 1, "method": method, "params": params}
        response = httpx.post(self.url, json=body, headers=headers, timeout=60)
        response.raise_for_status()
        data = json.loads(response.text, object_hook=_decode)
        if data.get("error"):
            raise RuntimeError(data["error"])
        return data["result"]

    def __call__(self, method: str, *args: Any, context: dict[str, Any] | None = None) -> Any:
        return self._post(
            f"model.{method}", [*args, {**self.context, **(context or {})}], self.auth
        )

    def search_read(self, model: str, domain: list[Any], fields: list[str]) -> list[dict[str, Any]]:
        return list(self(f"{model}.search_read", domain, 0, None, [["id", "ASC"]], fields))


def built() -> Path:
    """The seeded database's cache folder, built once per machine; test workers running side by
    side wait for the one that builds it (it is never read half-written)."""
    from demo_erp.tryton.instance import build

    cache = _cache()
    cache.parent.mkdir(parents=True, exist_ok=True)
    with (cache.parent / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        build(cache, seed=SEED, today=TEST_TODAY)
    return cache


@pytest.fixture(scope="session")
def tryton(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tryton]:
    """One seeded Tryton per test session (built once per machine, then copied)."""
    from demo_erp.tryton.instance import DATABASE, Server, available

    if not available():
        pytest.fail("Tryton is not installed: run `uv sync --extra tryton` (CI installs it).")
    cache = built()
    folder = tmp_path_factory.mktemp("tryton")
    shutil.copytree(cache / "db", folder / "db")
    server = Server(folder)
    try:
        server.wait()
        yield Tryton(server.url, DATABASE, folder)
    finally:
        server.stop()
