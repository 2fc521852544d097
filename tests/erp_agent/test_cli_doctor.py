"""`erp-agent doctor` against the demo ERP: one line per check, exit 0 when all pass; an ERP that
cannot be reached or production mode without a session key is a FAIL line and exit 1, never a
traceback; no secret is printed."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from server_doubles import LiveServer, serve_in_thread

from conftest import DemoERP
from demo_erp.server import free_port
from erp_agent.cli.doctor import run_checks
from erp_agent.config import load_settings
from erp_agent.models.fake_server import FakeOpenAIServer
from erp_agent.store import schema


def doctor(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ERP_AGENT_")}
    clean |= {"ERP_AGENT_DATA_DIR": str(tmp_path), "ERP_AGENT_EMBEDDINGS": "none",
              "COLUMNS": "200"} | env  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "erp_agent", "doctor"],
        env=clean, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def service_key(demo: DemoERP, user: str) -> tuple[str, str]:
    conn = sqlite3.connect(demo.path)
    try:
        key = conn.execute('select api_key from "tabUser" where name = ?', (user,)).fetchone()[0]
        secret = conn.execute(
            "select api_secret from __ApiSecrets where user = ?", (user,)
        ).fetchone()[0]
        return str(key), str(secret)
    finally:
        conn.close()


def test_doctor_passes_against_the_demo_erp(demo_erp: DemoERP, tmp_path: Path) -> None:
    key, secret = service_key(demo_erp, "Administrator")
    session_key = f"{Fernet.generate_key().decode()},{Fernet.generate_key().decode()}"
    done = doctor(
        {
            "ERP_AGENT_ERP_URL": demo_erp.url,
            "ERP_AGENT_MODE": "production",
            # Not serving yet (doctor runs before the first start): a warning, not a failure.
            "ERP_AGENT_PUBLIC_URL": f"https://127.0.0.1:{free_port()}/agent",
            "ERP_AGENT_SESSION_KEY": session_key,
            "ERP_AGENT_SERVICE_USER": "Administrator",
            "ERP_AGENT_SERVICE_API_KEY": key,
            "ERP_AGENT_SERVICE_API_SECRET": secret,
        },
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    names = [line.split()[1] for line in lines]
    for expected in ("configuration", "erp", "service", "session", "model", "store", "index",
                     "proxy", "single"):  # fmt: skip
        assert expected in names, lines
    assert all(line.split()[0] in ("ok", "warn") for line in lines), lines
    service = next(line for line in lines if line.split()[1] == "service")
    assert "signed in as Administrator" in service
    assert "Frappe 15" in service
    assert "2 key(s) set" in done.stdout
    for secret_text in (secret, *session_key.split(",")):
        assert secret_text not in done.stdout + done.stderr


def test_an_unreachable_erp_and_a_missing_key_in_production_are_fail_lines(
    tmp_path: Path,
) -> None:
    done = doctor(
        {"ERP_AGENT_ERP_URL": f"http://127.0.0.1:{free_port()}", "ERP_AGENT_MODE": "production"},
        tmp_path,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert any("Cannot reach the ERP" in line for line in fails), done.stdout
    assert any("ERP_AGENT_SESSION_KEY is not set" in line for line in fails), done.stdout


def test_a_bad_setting_is_one_fail_line(tmp_path: Path) -> None:
    done = doctor({"ERP_AGENT_TRUSTED_PROXIES": "127.0.0.1,proxy.local"}, tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert "'proxy.local', which is not an address" in done.stdout


# ---------------------------------------------------------------- every part, broken one by one

REDIS_URL = os.environ.get("ERP_AGENT_TEST_REDIS", "redis://127.0.0.1:6379/0")
AMQP_URL = os.environ.get("ERP_AGENT_TEST_AMQP", "amqp://guest:guest@127.0.0.1:5672//")
MODEL_KEY = "doctor-model-key"
SMALL = "supplier_group"  # an entity with a handful of records: its cards are synced for real


def _reachable(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class Deployment:
    env: dict[str, str]
    data: Path
    agent: LiveServer


def _model(url: str, key: str) -> str:
    return json.dumps({"provider": "openai", "model": "gpt-test", "base_url": url,
                       "api_key": key, "max_retries": 0})  # fmt: skip


@pytest.fixture(scope="module")
def deployment(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """Every part configured and working: the ERP with a service credential, a sync user and
    a sample user, a model, a migrated store, Redis, RabbitMQ with a worker on the queue, a
    synced index, and the running server at the public URL."""
    if not (_reachable(REDIS_URL) and _reachable(AMQP_URL)):
        pytest.skip("needs Redis and RabbitMQ on loopback (.ci/run starts them)")
    data = tmp_path_factory.mktemp("doctor")
    key, secret = service_key(demo_erp, "Administrator")
    model = FakeOpenAIServer(api_key=MODEL_KEY, model="gpt-test")
    agent = serve_in_thread(demo_erp.url, tmp_path_factory.mktemp("doctor-agent"))
    queue = f"erp-agent-doctor-test-{secrets.token_hex(4)}"
    with model.running() as model_url:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("ERP_AGENT_")}
        env = clean | {
            "ERP_AGENT_ERP_URL": demo_erp.url, "ERP_AGENT_DATA_DIR": str(data),
            "ERP_AGENT_EMBEDDINGS": "none", "COLUMNS": "250",
            "ERP_AGENT_SESSION_KEY": Fernet.generate_key().decode(),
            "ERP_AGENT_SERVICE_USER": "Administrator", "ERP_AGENT_SERVICE_API_KEY": key,
            "ERP_AGENT_SERVICE_API_SECRET": secret,
            "ERP_AGENT_SYNC_USER": "admin@demo.local", "ERP_AGENT_SYNC_PASSWORD": "demo",
            "ERP_AGENT_PASSWORD": "demo",
            "ERP_AGENT_REASONING_MODEL": _model(model_url, MODEL_KEY),
            "ERP_AGENT_REDIS_URL": REDIS_URL, "ERP_AGENT_REDIS_PREFIX": queue,
            "ERP_AGENT_QUEUE_URL": AMQP_URL, "ERP_AGENT_QUEUE_NAME": queue,
            "ERP_AGENT_PUBLIC_URL": agent.url,
        }  # fmt: skip
        asyncio.run(_migrate(data))
        synced = subprocess.run(
            [sys.executable, "-m", "erp_agent", "sync", "--entity", SMALL],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert synced.returncode == 0, synced.stdout + synced.stderr
        with (data / "worker.log").open("wb") as log:
            worker = subprocess.Popen(
                [sys.executable, "-m", "erp_agent", "worker", "--loglevel", "WARNING"],
                env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            yield Deployment(env, data, agent)
        finally:
            worker.terminate()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            agent.stop()


async def _migrate(data: Path) -> None:
    from erp_agent.store.sql_store import open_store

    store = open_store(f"sqlite+aiosqlite:///{data / 'erp-agent.sqlite'}")
    await store.migrate()  # type: ignore[attr-defined]
    await store.close()


def _run(deployment: Deployment, **changes: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "erp_agent", "doctor", "--as", "sales@demo.local"],
        env=deployment.env | changes, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _lines(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """status and detail of each check, by its name (the words before two spaces)."""
    found = {}
    for line in done.stdout.splitlines():
        status, _, rest = line.partition(" ")
        name, _, detail = rest.strip().partition("  ")
        found[name.strip()] = f"{status} {detail.strip()}"
    return found


def test_every_part_of_a_working_deployment_passes(deployment: Deployment) -> None:
    for _ in range(30):  # the worker has just started: it answers once it consumes the queue
        done = _run(deployment)
        if "queue worker" in _lines(done) and _lines(done)["queue worker"].startswith("ok"):
            break
    lines = _lines(done)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("erp", "service user", "sync user", "sample user", "session key", "model",
                 "store", "redis", "queue broker", "queue worker", "index", "proxy",
                 "public url"):  # fmt: skip
        assert lines.get(name, "").startswith("ok"), (name, done.stdout)
    assert "answered a one-token call" in lines["model"]
    assert "migrations at head" in lines["store"]
    assert "a write and a read" in lines["redis"]
    assert "1 synced entities within the ERP's counts" in lines["index"]
    assert "Traceback" not in done.stdout + done.stderr


def _future_store(deployment: Deployment) -> dict[str, str]:
    path = deployment.data / "future.sqlite"
    table = schema.VERSION_TABLE
    conn = sqlite3.connect(path)
    conn.execute(f"create table if not exists {table} (version_num varchar(32))")
    conn.execute(f"delete from {table}")
    conn.execute(f"insert into {table} values ('9999_from_the_future')")
    conn.commit()
    conn.close()
    return {"ERP_AGENT_DATABASE_URL": f"sqlite+aiosqlite:///{path}"}


def _stale_index(deployment: Deployment) -> dict[str, str]:
    """More supplier group cards than the ERP has supplier groups: deleted records still found."""
    from erp_agent.retrieval.documents import Document, Kind
    from erp_agent.retrieval.index_sqlite import SQLiteIndex

    folder = deployment.data / "stale"
    folder.mkdir(exist_ok=True)
    shutil.copy(deployment.data / "index.sqlite", folder / "index.sqlite")
    index = SQLiteIndex(str(folder / "index.sqlite"))
    gone = [
        Document(key=f"{SMALL}:Gone {n}", kind=Kind.RECORD, tenant="default",
                 title=f"Gone {n}", text="deleted in the ERP", entity=SMALL,
                 record_id=f"Gone {n}", parent=SMALL)
        for n in range(40)
    ]  # fmt: skip
    index.upsert(gone)
    index.close()
    return {"ERP_AGENT_INDEX_URL": f"sqlite:///{folder / 'index.sqlite'}"}


BREAKS: dict[str, Any] = {
    "erp": lambda d: {"ERP_AGENT_ERP_URL": f"http://127.0.0.1:{free_port()}"},
    "sync user": lambda d: {"ERP_AGENT_SYNC_PASSWORD": "wrong"},
    "sample user": lambda d: {"ERP_AGENT_PASSWORD": "wrong"},
    "session key": lambda d: {"ERP_AGENT_SESSION_KEY": "not-a-fernet-key"},
    "model": lambda d: {
        "ERP_AGENT_REASONING_MODEL": d.env["ERP_AGENT_REASONING_MODEL"].replace(
            MODEL_KEY, "wrong-key"
        )
    },
    "store": _future_store,
    "redis": lambda d: {"ERP_AGENT_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"},
    "queue broker": lambda d: {"ERP_AGENT_QUEUE_URL": AMQP_URL.replace("guest@", "wrong@")},
    "queue worker": lambda d: {"ERP_AGENT_QUEUE_NAME": f"no-worker-{secrets.token_hex(4)}"},
    "index": _stale_index,
    "proxy": lambda d: {"ERP_AGENT_ROOT_PATH": "/agent/../admin"},
    "public url": lambda d: {"ERP_AGENT_PUBLIC_URL": d.agent.url + "/agent"},
    "single sign-on": lambda d: {"ERP_AGENT_OAUTH_CLIENT_ID": "no-such-client"},
}


@pytest.mark.parametrize("part", list(BREAKS))
def test_each_broken_part_is_its_own_fail_line(
    deployment: Deployment, part: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process (the command's checks, without paying its start-up twelve times); the
    # exit status of a FAIL line is the subprocess tests' above.
    for name in [n for n in os.environ if n.startswith("ERP_AGENT_")]:
        monkeypatch.delenv(name)
    for name, value in (deployment.env | BREAKS[part](deployment)).items():
        monkeypatch.setenv(name, value)
    checks = asyncio.run(run_checks(load_settings(), "sales@demo.local"))
    failed = [c.name for c in checks if c.status == "FAIL"]
    assert failed == [part], "\n".join(f"{c.status} {c.name}: {c.detail}" for c in checks)
