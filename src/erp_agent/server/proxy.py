"""Behind a reverse proxy: X-Forwarded-For/-Proto honoured only from trusted proxies, and
X-Forwarded-Host only when also configured (``ERP_AGENT_FORWARDED_HOST``).

From a trusted address the request takes the client address and scheme the proxy saw (so
cookies are Secure and links are https). From any other address the headers are ignored and a
warning names the address once: a client cannot claim to be https or another address.

The host is different: a proxy that passes the client's own X-Forwarded-Host on (nginx's
``$http_host`` does) lets any client choose the host the server builds links with. It is taken
only when ``forwarded_host`` is set, and never for a single sign-on redirect URI, which comes
from ``ERP_AGENT_PUBLIC_URL`` (required in production) or the configured redirect URL; the host
the request was sent to is kept in the scope (``DIRECT_HOST``) for that.
HSTS is sent on every https response when ``hsts_seconds`` is above 0.

The path prefix the app is served under (``ERP_AGENT_ROOT_PATH``, or a trusted proxy's
X-Forwarded-Prefix, which wins) is applied here, once, for every layer below: the scope's
``root_path`` is the prefix and its ``path`` the prefix plus the route, as ASGI servers spell it,
whether the proxy stripped the prefix or passed it on. Routing, cookies, redirects, links, the
OpenAPI document and the CSRF exemptions all read it from there (``route_path``). A request for
the bare prefix (``/agent``) is redirected to ``/agent/``, so the pages' relative URLs resolve.
"""

from __future__ import annotations

import ipaddress
import logging
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from erp_agent.errors import ConfigError

log = logging.getLogger(__name__)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDED = (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host", b"x-forwarded-prefix")
_PREFIX = re.compile(r"(/[A-Za-z0-9._~-]+)*")  # /agent, /tools/agent; never //host or ..
DIRECT_HOST = "erp_agent.direct_host"  # the Host header as the request arrived, before any proxy's


def parse_networks(entries: list[str]) -> list[Network]:
    networks: list[Network] = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError as exc:
            raise ConfigError(
                f"ERP_AGENT_TRUSTED_PROXIES has {entry!r}, which is not an address or a "
                "network (e.g. 127.0.0.1, 10.0.0.0/8, ::1)."
            ) from exc
    return networks


def normal_prefix(value: str) -> str | None:
    """``/agent`` for ``/agent/``, ``agent`` or ``/agent``; "" for none; None if it is not a path."""
    if "//" in value:  # //host would read as another site in a redirect
        return None
    cleaned = value.strip().strip("/")
    prefix = f"/{cleaned}" if cleaned else ""
    if not _PREFIX.fullmatch(prefix) or any(part in (".", "..") for part in prefix.split("/")):
        return None
    return prefix


def route_path(scope: Scope) -> str:
    """The path below the prefix (``/v1/models`` for ``/agent/v1/models``): what routes,
    exemptions and labels compare, whatever prefix the app is served under."""
    root = str(scope.get("root_path") or "")
    path = str(scope.get("path") or "")
    if root and (path == root or path.startswith(root + "/")):
        return path[len(root) :]
    return path


def under_prefix(scope: Scope, prefix: str) -> Scope:
    """``scope`` as if served under ``prefix``: a path that still carries the prefix (a proxy
    that passed it on) or the server's own ``root_path`` is not prefixed twice."""
    path = route_path(scope)
    if prefix and (path == prefix or path.startswith(prefix + "/")):
        path = path[len(prefix) :]
    raw = scope.get("raw_path")
    full = prefix + path
    scope = {**scope, "root_path": prefix, "path": full}
    if raw is not None:
        query = bytes(raw).partition(b"?")[2]
        scope["raw_path"] = full.encode("utf-8") + (b"?" + query if query else b"")
    return scope


def trusted(address: str | None, networks: list[Network]) -> bool:
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False  # a Unix socket peer or a test client's name: not a proxy address
    return any(ip in network for network in networks)


class ProxyHeaders:
    def __init__(
        self,
        app: ASGIApp,
        trusted_proxies: list[str],
        hsts_seconds: int,
        forwarded_host: bool = False,
        root_path: str = "",
    ) -> None:
        self.app = app
        self.networks = parse_networks(trusted_proxies)
        self.forwarded_host = forwarded_host
        prefix = normal_prefix(root_path)
        if prefix is None:
            raise ConfigError(
                f"ERP_AGENT_ROOT_PATH={root_path!r} is not a path prefix: give it as /agent "
                "(letters, digits, - . _ ~ between slashes)."
            )
        self.root_path = prefix
        self.hsts = f"max-age={hsts_seconds}; includeSubDomains".encode() if hsts_seconds else b""
        self._warned: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        scope = {**scope, DIRECT_HOST: headers.get(b"host", b"").decode("latin-1")}
        client = scope.get("client")
        address = client[0] if client else None
        prefix = self.root_path
        if any(name in headers for name in FORWARDED):
            if trusted(address, self.networks):
                scope = self._forwarded(scope, headers)
                prefix = self._prefix(headers, prefix)
            elif address not in self._warned:
                self._warned.add(str(address))
                log.warning(
                    "Ignored X-Forwarded-* headers from %s, which is not a trusted proxy; "
                    "if it is your proxy, add it to ERP_AGENT_TRUSTED_PROXIES.",
                    address,
                )
        scope = under_prefix(scope, prefix)
        app = self.app
        if prefix and scope["path"] == prefix and scope["type"] == "http":
            app = _to_slash  # /agent → /agent/: the pages' relative URLs need the slash
        if scope.get("scheme") != "https" or not self.hsts:
            await app(scope, receive, send)
            return

        async def with_hsts(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (b"strict-transport-security", self.hsts),
                ]
            await send(message)

        await app(scope, receive, with_hsts)

    def _prefix(self, headers: dict[bytes, bytes], configured: str) -> str:
        sent = headers.get(b"x-forwarded-prefix")
        if sent is None:
            return configured
        prefix = normal_prefix(sent.decode("latin-1").split(",")[0])
        if prefix is None:
            log.warning("Ignored X-Forwarded-Prefix %r: not a path prefix such as /agent.", sent)
            return configured
        return prefix

    def _forwarded(self, scope: Scope, headers: dict[bytes, bytes]) -> Scope:
        scope = dict(scope)
        proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[0].strip()
        if proto in ("http", "https"):
            scope["scheme"] = proto
        hops = headers.get(b"x-forwarded-for", b"").decode("latin-1")
        # The nearest hop that is not itself a trusted proxy is the client.
        for hop in reversed([h.strip() for h in hops.split(",") if h.strip()]):
            if not trusted(hop, self.networks):
                scope["client"] = (hop, 0)
                break
        host = headers.get(b"x-forwarded-host") if self.forwarded_host else None
        if host:
            scope["headers"] = [(k, v) for k, v in scope.get("headers", []) if k != b"host"] + [
                (b"host", host.split(b",")[0].strip())
            ]
        return scope


async def _to_slash(scope: Scope, _: Receive, send: Send) -> None:
    query = scope.get("query_string") or b""
    location = scope["path"].encode("utf-8") + b"/" + (b"?" + query if query else b"")
    await send({"type": "http.response.start", "status": 308,
                "headers": [(b"location", location), (b"content-length", b"0")]})  # fmt: skip
    await send({"type": "http.response.body", "body": b""})
