"""Fault injection over real sockets, for the red-team tests. Ports are ephemeral, never fixed.

``FaultProxy`` stands in front of a real ERP: in ``pass`` mode it forwards every request
unchanged (cookies included); in a fault mode it answers the way a failing ERP, proxy or
network does — a 500, an nginx 502 page, a login portal's HTML with 200, JSON that is not the
API, an empty body, no answer before the timeout, a dropped connection. ``only`` limits the
fault to paths containing a text (e.g. ``get_roles``), as when one method of the ERP breaks.

``TcpProxy`` forwards raw TCP (a PostgreSQL store behind it); ``down()`` drops every connection
and refuses new ones, ``up()`` accepts them again on the same port: the store becoming
unreachable and coming back.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import struct
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NGINX_502 = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
    b"</h1></center><hr><center>nginx</center></body></html>"
)
MAINTENANCE = b"<!doctype html><html><body><h1>Down for maintenance</h1></body></html>"
PORTAL = (
    b"<!doctype html><html><body><form action='/login'>Sign in to the network</form></body></html>"
)


@dataclass(frozen=True)
class Fault:
    status: int
    body: bytes
    content_type: str = "application/json"
    delay: float = 0.0
    reset: bool = False  # close the connection without answering


SLOW_SECONDS = 2.5  # beyond the agent's ERP timeout in these tests (1 s)

# The modes an attack run tries, and the HTTP status the agent must answer each with on the
# OpenAI-compatible API: 502 an answer that is not the ERP's API, 503 unreachable, 504 too slow.
FAULTS: dict[str, Fault] = {
    "500 text": Fault(500, b"Internal Server Error", "text/plain"),
    "500 frappe exception": Fault(
        500, b'{"exc_type": "Exception", "exception": "Traceback (most recent call last): ..."}'
    ),
    "502 html": Fault(502, NGINX_502, "text/html"),
    "503 html": Fault(503, MAINTENANCE, "text/html"),
    "200 html": Fault(200, PORTAL, "text/html"),
    "garbage list": Fault(200, b'[1, {"x": null}]'),
    "garbage message": Fault(200, b'{"message": {"x": [1, 2]}, "docs": 7}'),
    "garbage bytes": Fault(200, b"\x00\xff{{not json"),
    "empty body": Fault(200, b""),
    "slow": Fault(200, b'{"message": []}', delay=SLOW_SECONDS),
    "connection dropped": Fault(0, b"", reset=True),
}
STATUS_FOR = {
    "500 text": 502,
    "500 frappe exception": 502,
    "502 html": 502,
    "503 html": 502,
    "200 html": 502,
    "garbage list": 502,
    "garbage message": 502,
    "garbage bytes": 502,
    "empty body": 502,
    "slow": 504,
    "connection dropped": 503,
}
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.fault: Fault | None = None
        self.only: str | None = None
        self.faulted = 0  # requests answered with the fault
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                fault = proxy.fault
                if fault is not None and (proxy.only is None or proxy.only in self.path):
                    proxy.faulted += 1
                    self._fault(fault)
                else:
                    self._forward(body)

            def _fault(self, fault: Fault) -> None:
                if fault.delay:
                    time.sleep(fault.delay)
                if fault.reset:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                try:
                    self.send_response(fault.status)
                    self.send_header("Content-Type", fault.content_type)
                    self.send_header("Content-Length", str(len(fault.body)))
                    self.end_headers()
                    self.wfile.write(fault.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, as it should

            def _forward(self, body: bytes) -> None:
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                try:
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    reply = conn.getresponse()
                    data = reply.read()
                    self.send_response(reply.status)
                    for name, value in reply.getheaders():
                        if name.lower() not in _HOP:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def inject(self, fault: Fault | None, only: str | None = None) -> None:
        self.fault, self.only, self.faulted = fault, only, 0

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class TcpProxy:
    """Raw TCP forwarding from an ephemeral loopback port to ``upstream`` (host, port)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.port = 0
        self.up()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    @property
    def is_up(self) -> bool:
        return self._listener is not None

    def down(self) -> None:
        """Refuse new connections and reset every open one (a store that went away)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
            except OSError:
                pass

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if self._listener is not listener:
                client.close()
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.close()
