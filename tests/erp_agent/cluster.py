"""A deployment as docs/deployment.md describes it, as real processes on loopback: web
workers (`erp-agent serve`) and queue workers (`erp-agent worker`) on one PostgreSQL
database, one Redis key prefix and one RabbitMQ queue, all unique to the caller."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from demo_erp.server import free_port

SESSION_KEY = "x" * 43 + "="  # a valid Fernet key, shared by every process
REDIS_URL = os.environ.get("ERP_AGENT_TEST_REDIS", "redis://127.0.0.1:6379/0")
AMQP_URL = os.environ.get("ERP_AGENT_TEST_AMQP", "amqp://guest:guest@127.0.0.1:5672//")


@dataclass
class Cluster:
    erp_url: str
    database_url: str
    data_dir: Path
    model_url: str | None = None  # an OpenAI-compatible endpoint for every process
    extra: dict[str, str] = field(default_factory=dict)
    prefix: str = field(default_factory=lambda: f"erp-test-{uuid.uuid4().hex[:10]}")
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    clients: list[httpx.Client] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "ERP_AGENT_ERP_URL": self.erp_url,
            "ERP_AGENT_DATA_DIR": str(self.data_dir),
            "ERP_AGENT_DATABASE_URL": self.database_url,
            "ERP_AGENT_REDIS_URL": REDIS_URL,
            "ERP_AGENT_REDIS_PREFIX": self.prefix,
            "ERP_AGENT_QUEUE_URL": AMQP_URL,
            "ERP_AGENT_QUEUE_NAME": self.prefix,
            "ERP_AGENT_SESSION_KEY": SESSION_KEY,
            **self.extra,
        }
        if self.model_url:
            env["ERP_AGENT_REASONING_MODEL"] = json.dumps(
                {
                    "provider": "openai",
                    "model": "fake-model",
                    "base_url": self.model_url,
                    "api_key": "test-key",
                    "max_retries": 0,
                }
            )
        return env

    def _start(self, args: list[str], name: str) -> subprocess.Popen[bytes]:
        with (self.data_dir / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "erp_agent", *args],
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: kill -9 reaches all of it
            )
        self.processes.append(process)
        return process

    def web(self, *, workers: int = 1, model: str | None = None) -> str:
        """Start a web worker (or ``workers`` of them on one port); its base URL once ready."""
        port = free_port()
        args = ["serve", "--port", str(port), "--workers", str(workers)]
        if model:
            args += ["--model", model]
        process = self._start(args, f"web-{port}")
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    return url
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the web worker did not start:\n{self.log(f'web-{port}')}")
            time.sleep(0.2)

    def worker(self, name: str = "worker") -> subprocess.Popen[bytes]:
        return self._start(["worker", "--loglevel", "INFO"], name)

    def log(self, name: str) -> str:
        path = self.data_dir / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    @staticmethod
    def kill(process: subprocess.Popen[bytes]) -> None:
        """kill -9, the whole process group, as a crash would."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)

    def signed_in(self, base_url: str, user: str = "admin@demo.local") -> httpx.Client:
        client = signed_in(base_url, user)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


def signed_in(base_url: str, user: str = "admin@demo.local") -> httpx.Client:
    """A browser signed in through ``base_url``; its cookie works on every worker."""
    client = httpx.Client(timeout=60)
    csrf = client.get(f"{base_url}/api/auth/csrf").json()["csrf"]
    reply = client.post(
        f"{base_url}/api/auth/sign-in",
        json={"user": user, "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    assert reply.status_code == 200, reply.text
    client.headers["X-CSRF-Token"] = reply.json()["csrf"]
    return client


def sse(text: str) -> list[tuple[str, object]]:
    events = []
    for chunk in text.split("\n\n"):
        lines = [line for line in chunk.splitlines() if line and not line.startswith(":")]
        if lines:
            name = next(line[7:] for line in lines if line.startswith("event: "))
            data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
            events.append((name, json.loads(data)))
    return events
