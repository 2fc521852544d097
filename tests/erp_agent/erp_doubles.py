"""An ERP that misbehaves over real HTTP: it answers every request with one fixed reply (an HTML
error page, a bare 500, …) after an optional delay. For the fault tests; port 0, never fixed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NGINX_502 = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
    b"</h1></center><hr><center>nginx</center></body></html>"
)


@dataclass
class Reply:
    status: int = 502
    body: bytes = NGINX_502
    content_type: str = "text/html"
    delay: float = 0.0


@dataclass
class BrokenERP:
    url: str
    reply: Reply
    paths: list[str] = field(default_factory=list)


@contextmanager
def broken_erp(reply: Reply) -> Iterator[BrokenERP]:
    erp = BrokenERP("", reply)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            erp.paths.append(self.path)
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            if erp.reply.delay:
                time.sleep(erp.reply.delay)
            try:
                self.send_response(erp.reply.status)
                self.send_header("Content-Type", erp.reply.content_type)
                self.send_header("Content-Length", str(len(erp.reply.body)))
                self.end_headers()
                self.wfile.write(erp.reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting, as it should

        do_GET = do_POST = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    erp.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield erp
    finally:
        server.shutdown()
        server.server_close()


def unused_url() -> str:
    """A URL nothing listens on (the port was free a moment ago): an ERP that is down."""
    from demo_erp.server import free_port

    return f"http://127.0.0.1:{free_port()}"
