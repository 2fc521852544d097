"""Start the demo ERP: open (or seed) the database, run the daily jobs, serve HTTP."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from demo_erp import db, documents
from demo_erp.api.app import create_app
from demo_erp.context import ADMINISTRATOR, Settings, as_user

DEFAULT_DB = Path("data") / "demo-erp.sqlite"


def prepare(settings: Settings) -> None:
    """Bring the schema up to date and run the scheduler's daily status refresh once."""
    conn = db.connect(settings.db_path)
    try:
        db.create_schema(conn)
        try:
            from demo_erp.controllers.accounts import refresh_statuses
        except ImportError:  # controllers without the daily job
            return
        ctx = as_user(conn, settings, ADMINISTRATOR)
        with documents.transaction(conn):
            refresh_statuses(ctx)
    finally:
        conn.close()


def bound_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening-ready socket bound now, handed to uvicorn: no window in which another
    process can take the port between choosing it and serving on it.

    The protocol is named (IPPROTO_TCP), not left 0: asyncio turns Nagle's algorithm off only
    on sockets that say they are TCP, and with it on every reply waits out the client's delayed
    ACK (40 ms a request on Linux)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningServer:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_in_thread(settings: Settings, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve in a background thread (tests, `erp-agent demo`); returns once it accepts requests."""
    prepare(settings)
    sock = bound_socket(host, port)
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        create_app(settings), host=host, port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: server.run(sockets=[sock]), daemon=True, name="demo-erp"
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"demo ERP did not start on {host}:{port}")
        time.sleep(0.02)
    return RunningServer(f"http://{host}:{port}", server, thread)


@contextmanager
def running(settings: Settings, host: str = "127.0.0.1", port: int = 0) -> Iterator[RunningServer]:
    handle = start_in_thread(settings, host, port)
    try:
        yield handle
    finally:
        handle.stop()


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve in the foreground until interrupted."""
    prepare(settings)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info", lifespan="off")


def settings_for(path: Path, version: int = 15, today: dt.date | None = None) -> Settings:
    return Settings(db_path=str(path), version=version, today=today)
