"""A reverse proxy in front of the demo ERP that delivers writes late: it takes the whole
request at once, holds it, and forwards it after ``hold`` seconds — whether or not the client
is still waiting — the way a proxy with a long read timeout in front of a busy ERP can. Reads
(and sign-in) pass straight through. ``hold = None`` never delivers a write (it is lost).

Real HTTP on 127.0.0.1, port 0 (never a fixed one), in a thread of the test process. Every
write's timings are kept, so a test can check the order of events: sent, the client's timeout,
delivered (the ERP's answer to the proxy, so committed), decided.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

# Sign-in, and reads sent as POST because their arguments are too long for a URL.
_PASS_THROUGH = ("/api/method/login", "/api/method/logout", "/api/method/frappe.client.get",
                 "/api/method/frappe.desk.reportview.get")  # fmt: skip
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
               "content-encoding", "proxy-connection", "te", "trailer", "upgrade"}  # fmt: skip


@dataclass
class Write:
    method: str
    path: str
    received: float  # time.time() when the proxy had the whole request
    delivered: float | None = None  # when the ERP answered it (committed or refused)
    status: int | None = None
    lost: bool = False


@dataclass
class FaultProxy:
    upstream: str
    hold: float | None
    url: str = ""
    writes: list[Write] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _idle: threading.Condition = field(init=False)
    _busy: int = 0

    def __post_init__(self) -> None:
        self._idle = threading.Condition(self._lock)

    def wait_delivered(self, timeout: float) -> None:
        """Until no write is held or on its way to the ERP."""
        with self._idle:
            assert self._idle.wait_for(lambda: self._busy == 0, timeout), "writes still held"

    def _begin(self, write: Write) -> None:
        with self._lock:
            self.writes.append(write)
            self._busy += 1

    def _end(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()


def _is_write(method: str, path: str) -> bool:
    return method != "GET" and not path.startswith(_PASS_THROUGH)


@contextmanager
def fault_proxy(upstream: str, hold: float | None) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, hold)
    forward = httpx.Client(base_url=upstream, timeout=60)

    class Handler(BaseHTTPRequestHandler):
        def _relay(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            write = None
            if _is_write(self.command, self.path):
                write = Write(self.command, self.path, time.time())
                proxy._begin(write)
            try:
                if write is not None:
                    hold = proxy.hold
                    if hold is None:  # lost on the way: the ERP never sees it
                        write.lost = True
                        return
                    time.sleep(hold)  # the client may have given up long ago
                reply = forward.request(self.command, self.path, content=body, headers=headers)
                if write is not None:
                    write.delivered, write.status = time.time(), reply.status_code
                self._answer(reply)
            finally:
                if write is not None:
                    proxy._end()

        def _answer(self, reply: httpx.Response) -> None:
            try:
                self.send_response(reply.status_code)
                for key, value in reply.headers.multi_items():
                    if key.lower() not in _HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped waiting: the answer has nowhere to go

        do_GET = do_POST = do_PUT = do_DELETE = _relay

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="fault-proxy")
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        forward.close()
