"""`erp-agent doctor`'s checks of the services beside the agent: Redis, the queue's broker, a
queue worker, and the public address (TLS, the proxy's headers, the path prefix) as users reach
it. Each returns one ``Check``; a service that is not configured is ``ok … off``."""

from __future__ import annotations

import asyncio
import secrets
import time
import urllib.parse
from typing import Any

import httpx

from erp_agent.cli._doctor_types import Check
from erp_agent.config import Settings

BROKER_SECONDS = 10.0  # to connect to the broker and declare a queue
WORKER_SECONDS = 15.0  # for a queue worker to take the ping task and answer


def _where(url: str) -> str:
    """The address of a service URL without its password."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path if parts.path not in ('', '/') else ''}"


def _words(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


async def redis_check(settings: Settings) -> Check:
    """Ping, then write a key and read it back (the gate, streams and cache all write)."""
    if not settings.redis_url:
        return Check("redis", "ok", "off (ERP_AGENT_REDIS_URL unset): each process alone")
    import redis.asyncio as aioredis

    where = _where(settings.redis_url)
    client = aioredis.Redis.from_url(settings.redis_url, socket_timeout=5, socket_connect_timeout=5)
    key = f"{settings.redis_prefix}:doctor:{secrets.token_hex(6)}"
    value = secrets.token_hex(8)
    try:
        await client.ping()
        await client.set(key, value, ex=60)
        read = await client.get(key)
        await client.delete(key)
    except Exception as exc:  # the driver's own errors: refused, auth, read-only replica…
        return Check("redis", "FAIL", f"{where}: {_words(exc)}")
    finally:
        await client.aclose()
    if (read.decode() if isinstance(read, bytes) else read) != value:
        return Check("redis", "FAIL", f"{where}: a key written was not read back")
    return Check("redis", "ok", f"{where}: ping, a write and a read")


class _Reply:
    """A queue of the doctor's own on the broker, for the worker's answer."""

    def __init__(self, url: str) -> None:
        import kombu

        k: Any = kombu  # kombu ships no types
        self.name = f"erp-agent-doctor-{secrets.token_hex(6)}"
        self.connection: Any = k.Connection(url, connect_timeout=BROKER_SECONDS)
        exchange = k.Exchange(self.name, "direct", durable=False, auto_delete=True)
        self.queue: Any = k.Queue(
            self.name, exchange, routing_key=self.name, durable=False, auto_delete=True
        )
        self.bound: Any = None

    def declare(self) -> None:
        self.connection.ensure_connection(max_retries=1, timeout=BROKER_SECONDS)
        self.bound = self.queue(self.connection.default_channel)
        self.bound.declare()

    def wait(self, token: str, seconds: float) -> str | None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            message = self.bound.get(no_ack=True)
            if message is not None and message.payload.get("token") == token:
                return str(message.payload.get("worker") or "a worker")
            if message is None:
                time.sleep(0.2)
        return None

    def close(self) -> None:
        try:
            if self.bound is not None:
                self.bound.delete()
                self.bound.exchange.delete()
        except Exception:
            pass
        self.connection.release()


def _queue_checks(settings: Settings) -> list[Check]:
    url = settings.queue_url or ""
    where = _where(url)
    reply = _Reply(url)
    try:
        try:
            reply.declare()
        except Exception as exc:  # refused, wrong credentials, no such vhost, no permission
            return [
                Check("queue broker", "FAIL", f"{where}: {_words(exc)}"),
                Check("queue worker", "warn", "not checked: the broker did not accept us"),
            ]
        checks = [Check("queue broker", "ok", f"{where}: connected and declared a queue")]
        from erp_agent.queue.celery_app import PING, configure

        token = secrets.token_hex(8)
        app = configure(url, settings.queue_name)
        app.send_task(PING, args=[reply.name, token], queue=settings.queue_name)
        worker = reply.wait(token, WORKER_SECONDS)
        if worker is None:
            checks.append(
                Check(
                    "queue worker",
                    "FAIL",
                    f"no worker took a ping from queue {settings.queue_name} within "
                    f"{WORKER_SECONDS:.0f} s: start `erp-agent worker` (same "
                    "ERP_AGENT_QUEUE_URL and ERP_AGENT_QUEUE_NAME), or all are busy",
                )
            )
        else:
            checks.append(
                Check("queue worker", "ok", f"{worker} answered on queue {settings.queue_name}")
            )
        return checks
    finally:
        reply.close()


async def queue_checks(settings: Settings) -> list[Check]:
    """Connect to the broker with the configured credentials and declare a queue; then send a
    ping task through the turns' queue and wait for a worker's answer."""
    if not settings.queue_url:
        return [Check("queue", "ok", "off (ERP_AGENT_QUEUE_URL unset): turns run in the server")]
    return await asyncio.to_thread(_queue_checks, settings)


async def public_check(settings: Settings) -> Check:
    """The web app at ERP_AGENT_PUBLIC_URL, as users reach it: TLS, HSTS, and cookies that say
    the proxy's scheme and prefix arrived (Secure over https, scoped to the prefix)."""
    server = settings.server
    url = (settings.public_url or "").rstrip("/")
    if not url:
        if server.mode == "production":
            return Check("public url", "FAIL", "ERP_AGENT_PUBLIC_URL is not set: production "
                         "mode refuses to start without it")  # fmt: skip
        return Check("public url", "warn", "ERP_AGENT_PUBLIC_URL unset: links follow requests")
    path = urllib.parse.urlsplit(url).path or "/"
    try:
        async with httpx.AsyncClient(timeout=10, follow_redirects=False) as http:
            health = await http.get(f"{url}/healthz")
            csrf = await http.get(f"{url}/api/auth/csrf")
    except httpx.ConnectError as exc:
        if "SSL" in str(exc) or "certificate" in str(exc).lower():
            return Check("public url", "FAIL", f"{url}: TLS: {_words(exc)}")
        return Check("public url", "warn", f"{url} does not answer yet ({_words(exc)}): start "
                     "the server and run the doctor again")  # fmt: skip
    except httpx.HTTPError as exc:
        return Check("public url", "FAIL", f"{url}: {_words(exc)}")
    if health.status_code not in (200, 503) or "status" not in _json(health):
        return Check("public url", "FAIL", f"{url}/healthz answered HTTP {health.status_code}, "
                     "not erp-agent: is the proxy's prefix ERP_AGENT_ROOT_PATH?")  # fmt: skip
    problems = []
    cookie = csrf.headers.get("set-cookie", "")
    if f"Path={path.rstrip('/') or '/'}" not in cookie:
        problems.append(f"cookies are scoped to {_cookie_path(cookie)!r}, not {path!r} (set "
                        "ERP_AGENT_ROOT_PATH or send X-Forwarded-Prefix)")  # fmt: skip
    if url.startswith("https://"):
        if "Secure" not in cookie:
            problems.append("cookies are not Secure: the server did not see https (the proxy "
                            "must send X-Forwarded-Proto from ERP_AGENT_TRUSTED_PROXIES)")  # fmt: skip
        if server.hsts_seconds and "strict-transport-security" not in health.headers:
            problems.append("no Strict-Transport-Security header")
    elif server.mode == "production":
        problems.append("not https")
    if problems:
        return Check("public url", "FAIL", f"{url}: " + "; ".join(problems))
    scheme = "https, HSTS, Secure cookies" if url.startswith("https://") else "http"
    return Check("public url", "ok", f"{url} answers: {scheme}, cookies scoped to {path}")


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        found = response.json()
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _cookie_path(cookie: str) -> str:
    for part in cookie.split(";"):
        name, _, value = part.strip().partition("=")
        if name.lower() == "path":
            return value
    return "?"
