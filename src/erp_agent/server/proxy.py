"""Behind a reverse proxy: X-Forwarded-For/-Proto/-Host honoured only from trusted proxies.

From a trusted address the request takes the client address, scheme and host the proxy saw
(so cookies are Secure and links are https). From any other address the headers are ignored
and a warning names the address once: a client cannot claim to be https or another address.
HSTS is sent on every https response when ``hsts_seconds`` is above 0.
"""

from __future__ import annotations

import ipaddress
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from erp_agent.errors import ConfigError

log = logging.getLogger(__name__)
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDED = (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host")


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


def trusted(address: str | None, networks: list[Network]) -> bool:
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False  # a Unix socket peer or a test client's name: not a proxy address
    return any(ip in network for network in networks)


class ProxyHeaders:
    def __init__(self, app: ASGIApp, trusted_proxies: list[str], hsts_seconds: int) -> None:
        self.app = app
        self.networks = parse_networks(trusted_proxies)
        self.hsts = f"max-age={hsts_seconds}; includeSubDomains".encode() if hsts_seconds else b""
        self._warned: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        client = scope.get("client")
        address = client[0] if client else None
        if any(name in headers for name in FORWARDED):
            if trusted(address, self.networks):
                scope = self._forwarded(scope, headers)
            elif address not in self._warned:
                self._warned.add(str(address))
                log.warning(
                    "Ignored X-Forwarded-* headers from %s, which is not a trusted proxy; "
                    "if it is your proxy, add it to ERP_AGENT_TRUSTED_PROXIES.",
                    address,
                )
        if scope.get("scheme") != "https" or not self.hsts:
            await self.app(scope, receive, send)
            return

        async def with_hsts(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (b"strict-transport-security", self.hsts),
                ]
            await send(message)

        await self.app(scope, receive, with_hsts)

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
        host = headers.get(b"x-forwarded-host")
        if host:
            scope["headers"] = [(k, v) for k, v in scope.get("headers", []) if k != b"host"] + [
                (b"host", host.split(b",")[0].strip())
            ]
        return scope
