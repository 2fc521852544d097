"""docs/deployment.md's nginx block, run as written with Debian's nginx in front of the server on
loopback (TLS with a throwaway certificate, ephemeral ports), and every channel driven through it
under /agent: the web app and its chat stream, the admin console's panels, the OpenAPI document,
a background turn's event stream, the OpenAI-compatible API with the official ``openai`` client,
MCP with the official ``mcp`` SDK (and the confirm link it gives), the ERP plugin's relay turns
and single sign-on. Each runs three ways: as documented (ERP_AGENT_ROOT_PATH and the proxy's
X-Forwarded-Prefix), with the header only, and with the setting only."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import shutil
import sqlite3
import ssl
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import openai
import pytest
from channel_fixtures import ADMIN, OwnERP, own_erp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_doubles import CREATE_LEAD, SALES_BY_CUSTOMER, LiveServer, serve_in_thread

from demo_erp import oauth as erp_oauth
from demo_erp.server import free_port

sys.path.insert(0, str(Path(__file__).parents[2] / "integrations" / "frappe" / "erp_agent_plugin"))
from erp_agent_plugin.executor import run_turn
from erp_agent_plugin.relay_client import HttpRelay
from erp_agent_plugin.rest_api import RestApi

__all__ = ["own_erp"]
DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
STATIC = Path(__file__).resolve().parents[2] / "src" / "erp_agent" / "server" / "static"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
PREFIX = "/agent"
CLIENT_ID = "erp-agent-behind-nginx"
pytestmark = pytest.mark.skipif(
    NGINX is None, reason="nginx is not installed (.ci/run installs it)"
)
# How the server learns its prefix: (ERP_AGENT_ROOT_PATH, nginx sends X-Forwarded-Prefix).
MODES = {
    "as documented": ("/agent", True),
    "X-Forwarded-Prefix only": ("", True),
    "ERP_AGENT_ROOT_PATH only": ("/agent", False),
}


def documented_server_block() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## HTTPS behind nginx") :]
    found = re.search(r"```nginx\n(.*?)```", section, re.S)
    assert found, "docs/deployment.md has no nginx block under 'HTTPS behind nginx'"
    return found.group(1)


def certificate(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def nginx_conf(folder: Path, block: str) -> list[str]:
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir()
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = folder / "nginx.conf"
    conf.write_text(
        f"""{user}worker_processes 1;
daemon off;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} warn;
events {{ worker_connections 64; }}
http {{
    access_log {folder / "access.log"};
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
{block}
}}
""",
        encoding="utf-8",
    )
    assert NGINX is not None
    return [NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")]


@dataclass
class Behind:
    """The agent as its users reach it: ``url`` is https://127.0.0.1:PORT/agent."""

    url: str
    trust: ssl.SSLContext
    cert: Path
    erp: OwnERP
    agent: LiveServer
    mode: str

    def client(self, **options: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=self.trust, timeout=60, **options)

    @contextmanager
    def signed_in(self, user: str = ADMIN) -> Iterator[httpx.Client]:
        """A browser-like web session of ``user`` through nginx."""
        with self.client() as client:
            csrf = client.get("/api/auth/csrf").json()["csrf"]
            reply = client.post(
                "/api/auth/sign-in",
                json={"user": user, "password": "demo"},
                headers={"X-CSRF-Token": csrf},
            )
            assert reply.status_code == 200, reply.text
            client.headers["X-CSRF-Token"] = reply.json()["csrf"]
            yield client

    def user_key(self, user: str = ADMIN) -> str:
        with self.signed_in() as admin:
            reply = admin.post("/api/admin/api-keys", json={"user": user, "label": "nginx"})
        assert reply.status_code == 200, reply.text
        return str(reply.json()["key"])

    def org_key(self) -> str:
        with self.signed_in() as admin:
            reply = admin.post("/api/admin/api-keys/org", json={"label": "nginx"})
        assert reply.status_code == 200, reply.text
        return str(reply.json()["key"])


@pytest.fixture(scope="module", params=list(MODES))
def behind(
    request: pytest.FixtureRequest, own_erp: OwnERP, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Behind]:
    mode = str(request.param)
    root_path, send_prefix = MODES[mode]
    folder = tmp_path_factory.mktemp("nginx")
    cert, key = certificate(folder)
    port = free_port()
    public = f"https://127.0.0.1:{port}{PREFIX}"
    # As `erp-agent serve` runs it, with the documented environment's settings.
    agent = serve_in_thread(
        own_erp.url,
        tmp_path_factory.mktemp("agent"),
        delay=0.5,
        settings={
            "server": {"root_path": root_path},
            "public_url": public,
            "oauth": {"client_id": CLIENT_ID},
        },
    )
    conn = sqlite3.connect(own_erp.path)
    conn.row_factory = sqlite3.Row
    try:  # registered as an ERPNext administrator would, for the address users reach
        erp_oauth.register_client(
            conn, [f"{public}/api/auth/sso/callback"], client_id=CLIENT_ID, skip_authorization=True
        )
    finally:
        conn.close()
    block = documented_server_block()
    assert "proxy_set_header X-Forwarded-Prefix /agent;" in block
    if not send_prefix:
        block = re.sub(r"\n\s*proxy_set_header X-Forwarded-Prefix[^\n]*", "", block)
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
    block = block.replace("/etc/ssl/certs/agent.example.com.pem", str(cert))
    block = block.replace("/etc/ssl/private/agent.example.com.key", str(key))
    assert "http://127.0.0.1:8080/" in block
    block = block.replace("http://127.0.0.1:8080/", f"{agent.url}/")
    args = nginx_conf(folder, block)
    checked = subprocess.run([*args, "-t"], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    trust = ssl.create_default_context(cafile=str(cert))
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                httpx.get(f"{public}/healthz", verify=trust, timeout=1).close()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError((folder / "error.log").read_text()) from None
                time.sleep(0.1)
        yield Behind(public, trust, cert, own_erp, agent, mode)
    finally:
        process.terminate()  # nginx's fast shutdown; its workers end with it
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        agent.stop()


def test_pages_assets_cookies_docs_and_the_chat_stream(behind: Behind) -> None:
    with behind.client() as client:
        bare = client.get(behind.url.removesuffix("/"), follow_redirects=False)
        assert bare.status_code in (301, 308)
        assert urllib.parse.urlsplit(bare.headers["location"]).path == f"{PREFIX}/"
        for page in ("/", "/admin"):
            shown = client.get(page)
            assert shown.status_code == 200
            assert shown.headers["strict-transport-security"].startswith("max-age=31536000")
            assert "default-src 'self'" in shown.headers["content-security-policy"]
            # Every asset the page names resolves under the prefix (relative URLs).
            for asset in re.findall(r'(?:src|href)="(static/[^"]+)"', shown.text):
                assert client.get(f"/{asset}").status_code == 200, asset
        assert client.get("/favicon.ico", follow_redirects=True).status_code == 200
        assert client.get("/static/api.js").status_code == 200
        openapi = client.get("/openapi.json").json()
        assert openapi["servers"][0]["url"] == PREFIX
        assert f"{PREFIX}/openapi.json" in client.get("/docs").text

        csrf = client.get("/api/auth/csrf")
        cookie = csrf.headers["set-cookie"]
        assert "Secure" in cookie
        assert f"Path={PREFIX}" in cookie
        signed = client.post(
            "/api/auth/sign-in",
            json={"user": "sales@demo.local", "password": "demo"},
            headers={"X-CSRF-Token": csrf.json()["csrf"]},
        )
        assert signed.status_code == 200, signed.text
        for set_cookie in signed.headers.get_list("set-cookie"):
            assert "Secure" in set_cookie
            assert f"Path={PREFIX}" in set_cookie
        session_cookie = next(
            c for c in signed.headers.get_list("set-cookie") if c.startswith("erp_agent_session=")
        )
        assert "HttpOnly" in session_cookie
        client.headers["X-CSRF-Token"] = signed.json()["csrf"]
        assert client.get("/api/auth/me").json()["user"] == "sales@demo.local"

        # The chat stream: each model step takes 0.5 s; through nginx the first event must
        # arrive long before the last, i.e. nothing buffers the stream.
        arrivals: list[tuple[float, str]] = []
        started = time.monotonic()
        with client.stream(
            "POST",
            "/api/chat",
            json={"message": SALES_BY_CUSTOMER},
            headers={"Accept": "text/event-stream"},
        ) as stream:
            assert stream.status_code == 200
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    arrivals.append((time.monotonic() - started, line[7:]))
        names = [name for _, name in arrivals]
        assert names[-1] == "response", names
        first, last = arrivals[0][0], arrivals[-1][0]
        assert last - first > 1.0, arrivals

        # A background turn: its event stream's URL is under the prefix, and streams from it.
        queued = client.post("/api/chat", json={"message": SALES_BY_CUSTOMER, "background": True})
        assert queued.status_code == 202, queued.text
        events = queued.json()["events"]
        assert events.startswith(f"{PREFIX}/api/turns/")
        origin = behind.url.removesuffix(PREFIX)
        with client.stream("GET", origin + events) as stream:
            assert stream.status_code == 200
            seen = [line[7:] for line in stream.iter_lines() if line.startswith("event: ")]
        assert seen[-1] == "response", seen


def _literal_api_calls(script: str) -> list[tuple[str, str]]:
    """(method, path) of every api('METHOD', 'path') a script makes with a fixed path."""
    text = (STATIC / script).read_text(encoding="utf-8")
    return re.findall(r"api\('(GET|POST|PUT|DELETE)', '([^'$]+)'", text)


def test_the_admin_console_and_the_chat_page_call_their_api_under_the_prefix(
    behind: Behind,
) -> None:
    calls = _literal_api_calls("admin.js") + _literal_api_calls("app.js")
    gets = sorted({path for method, path in calls if method == "GET"})
    assert {"api/admin/api-keys", "api/admin/index", "api/admin/model"} <= set(gets)
    with behind.signed_in() as admin:
        for path in gets:
            reply = admin.get(f"/{path}")
            assert reply.status_code == 200, (path, reply.status_code, reply.text[:200])
        issued = admin.post("/api/admin/api-keys", json={"user": ADMIN, "label": "panel"})
        assert issued.status_code == 200, issued.text
        listed = admin.get("/api/admin/api-keys").json()["keys"]
        assert any(k["label"] == "panel" for k in listed)


def test_the_openai_api_with_the_official_client(behind: Behind) -> None:
    http = httpx.Client(verify=behind.trust, timeout=60)
    client = openai.OpenAI(
        base_url=f"{behind.url}/v1", api_key=behind.user_key(), http_client=http, max_retries=0
    )
    try:
        assert "erp-agent" in [m.id for m in client.models.list()]
        reply = client.chat.completions.create(
            model="erp-agent", messages=[{"role": "user", "content": SALES_BY_CUSTOMER}]
        )
        assert reply.choices[0].message.content  # the whole agent answered, through /agent/v1
        chunks = client.chat.completions.create(
            model="erp-agent",
            messages=[{"role": "user", "content": CREATE_LEAD}],
            stream=True,
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        # The confirm link points at the web app under the prefix, and that page answers.
        link = re.search(r"\((https://[^)\s]+\?proposal=[\w-]+)\)", text)
        assert link, text
        assert link.group(1).startswith(f"{behind.url}/?proposal=")
        with behind.client() as web:
            assert web.get(link.group(1)).status_code == 200
    finally:
        client.close()
        http.close()


@pytest.mark.anyio
async def test_mcp_with_the_official_sdk_and_its_confirm_link(behind: Behind) -> None:
    key = behind.user_key()
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {key}"}, verify=behind.trust, timeout=60
    )
    async with http, Client(streamable_http_client(f"{behind.url}/mcp", http_client=http)) as mcp:
        names = [t.name for t in (await mcp.list_tools()).tools]
        assert "metrics.query" in names
        year = dt.date.today().year
        figure = await mcp.call_tool(
            "metrics.query",
            {"metric": "revenue", "period": {"from": f"{year}-01-01", "to": f"{year}-12-31"}},
        )
        assert not figure.is_error
        write = await mcp.call_tool("lead.create", {"name": "Behind Nginx Prospect"})
    text = "\n".join(c.text for c in write.content if isinstance(c, types.TextContent))
    link = re.search(r"(https://\S+\?proposal=(prop_[\w-]+))", text)
    assert link, text
    assert link.group(1).startswith(f"{behind.url}/?proposal=")
    # The link opens the web app, whose script asks for the proposal under the prefix.
    with behind.signed_in() as web:
        assert web.get(link.group(1)).status_code == 200
        shown = web.get(f"/api/proposals/{link.group(2)}")
        assert shown.status_code == 200, shown.text
        assert shown.json()["status"] == "pending"
    # A wrong key is the server's own words, not an invitation to sign in elsewhere.
    with behind.client() as client:
        wrong = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": "Bearer eak_wrong"},
        )
    assert wrong.status_code == 401
    assert "not valid or was revoked" in wrong.json()["error"]["message"]


def test_relay_turns_from_the_erp_plugin(behind: Behind, monkeypatch: pytest.MonkeyPatch) -> None:
    # The plugin's own client (urllib) trusts the certificate the way a bench would.
    monkeypatch.setenv("SSL_CERT_FILE", str(behind.cert))
    relay = HttpRelay(behind.url, behind.org_key())
    seen: list[dict[str, Any]] = []
    reply = run_turn(
        relay, RestApi(behind.erp.url, ADMIN, "demo"), ADMIN, message=CREATE_LEAD,
        on_calls=seen.extend,
    )  # fmt: skip
    assert reply["status"] == "final", reply
    assert seen  # the plugin ran the relay's ERP calls, posted back under the prefix
    assert any(b["type"] == "proposal" for b in reply["response"]["blocks"]), reply


def test_single_sign_on_comes_back_under_the_prefix(behind: Behind) -> None:
    with behind.client() as agent, httpx.Client(base_url=behind.erp.url, timeout=30) as erp:
        start = agent.get("/api/auth/sso/start", follow_redirects=False)
        assert start.status_code == 302
        authorize = start.headers["location"]
        sent = urllib.parse.parse_qs(urllib.parse.urlsplit(authorize).query)
        assert sent["redirect_uri"] == [f"{behind.url}/api/auth/sso/callback"]
        erp.post("/api/method/login", data={"usr": ADMIN, "pwd": "demo"}).raise_for_status()
        back = erp.get(authorize, follow_redirects=False)
        assert back.status_code == 302, back.text[:300]
        callback = back.headers["location"]
        assert callback.startswith(f"{behind.url}/api/auth/sso/callback?")
        home = agent.get(callback, follow_redirects=False)
        assert home.status_code == 302, home.text[:300]
        assert urllib.parse.urlsplit(home.headers["location"]).path == f"{PREFIX}/"
        for set_cookie in home.headers.get_list("set-cookie"):
            assert f"Path={PREFIX}" in set_cookie
        assert agent.get("/api/auth/me").json()["user"] == ADMIN


@pytest.mark.browser
def test_the_web_app_and_the_admin_console_in_a_browser(behind: Behind) -> None:
    """Chromium through nginx: the page's own scripts call the API under the prefix (chat,
    admin panels, the confirm link), with no failed request and no script error."""
    from playwright.sync_api import expect, sync_playwright
    from test_server_browser import ARGS, CHROMIUM, ask

    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    failed: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(base_url=behind.url, ignore_https_errors=True)
        page = context.new_page()
        page.on("pageerror", lambda e: failed.append(str(e)))
        page.on(
            "response",
            lambda r: failed.append(f"{r.status} {r.url}") if r.status == 404 else None,
        )
        try:
            page.goto(f"{behind.url}/")
            page.fill("input[name=user]", ADMIN)
            page.fill("input[name=password]", "demo")
            page.click("#sign-in button[type=submit]")
            expect(page.locator("#who")).to_contain_text(ADMIN)
            ask(page, SALES_BY_CUSTOMER)  # streamed from api/chat, answered in full
            expect(page.locator(".msg.agent .feedback").first).to_be_visible(timeout=30_000)
            ask(page, CREATE_LEAD)
            expect(page.locator(".proposal-block").last).to_be_visible(timeout=30_000)

            page.goto(f"{behind.url}/admin")
            page.fill("#key-form input[name=user]", ADMIN)
            page.click("#key-form button[type=submit]")  # issued through the panel's own call
            expect(page.locator("#key-status")).to_contain_text("Copy this key now")
            expect(page.locator("#keys tbody tr").first).to_be_attached(timeout=20_000)
            expect(page.locator("#index-summary")).to_contain_text("cards in the index")
            expect(page.locator("#model-current")).not_to_be_empty()

            # A confirm link, as an MCP or OpenAI-API client shows it, opens the proposal.
            with behind.signed_in() as web:
                made = web.post("/api/chat", json={"message": CREATE_LEAD, "background": True})
                turn = web.get(f"/api/turns/{made.json()['turn_id']}")
                for _ in range(60):
                    if turn.json()["status"] in ("done", "failed"):
                        break
                    time.sleep(0.5)
                    turn = web.get(f"/api/turns/{made.json()['turn_id']}")
            blocks = turn.json()["response"]["blocks"]
            proposal = next(b for b in blocks if b["type"] == "proposal")
            page.goto(f"{behind.url}/?proposal={proposal['id']}")
            shown = page.locator(f".proposal-block[data-id='{proposal['id']}']")
            expect(shown).to_be_visible(timeout=20_000)
            expect(page.locator(".msg.agent .error")).to_have_count(0)
        finally:
            context.close()
            browser.close()
    assert failed == []
