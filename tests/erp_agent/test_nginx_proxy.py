"""docs/deployment.md's nginx block, run as written with Debian's nginx in front of the server on
loopback (TLS with a throwaway certificate, ephemeral ports): the app loads under /agent/,
cookies are Secure and scoped to /agent, HSTS is set, and the chat stream arrives event by event
instead of all at the end."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import shutil
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from server_doubles import SALES_BY_CUSTOMER, LiveServer, serve_in_thread

from conftest import DemoERP
from demo_erp.server import free_port

DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
pytestmark = pytest.mark.skipif(
    NGINX is None, reason="nginx is not installed (.ci/run installs it)"
)


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


@pytest.fixture
def agent(demo_erp: DemoERP, tmp_path: Path) -> Iterator[LiveServer]:
    # As `erp-agent serve` runs it: the root path set, forwarded headers left to the app.
    server = serve_in_thread(
        demo_erp.url,
        tmp_path,
        delay=0.5,
        uvicorn_options={"root_path": "/agent", "proxy_headers": False},
    )
    yield server
    server.stop()


@pytest.fixture
def proxy(agent: LiveServer, tmp_path: Path) -> Iterator[tuple[str, ssl.SSLContext]]:
    assert NGINX is not None
    folder = tmp_path / "nginx"
    folder.mkdir()
    cert, key = certificate(folder)
    port = free_port()
    block = documented_server_block()
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{port} ssl;")
    block = block.replace("/etc/ssl/certs/agent.example.com.pem", str(cert))
    block = block.replace("/etc/ssl/private/agent.example.com.key", str(key))
    assert "http://127.0.0.1:8080/" in block
    block = block.replace("http://127.0.0.1:8080/", f"{agent.url}/")
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
    args = [NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")]
    checked = subprocess.run([*args, "-t"], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    trust = ssl.create_default_context(cafile=str(cert))
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                httpx.get(f"https://127.0.0.1:{port}/agent/healthz", verify=trust, timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError((folder / "error.log").read_text()) from None
                time.sleep(0.1)
        yield f"https://127.0.0.1:{port}", trust
    finally:
        process.terminate()  # nginx's fast shutdown; its workers end with it
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def test_the_documented_nginx_config_serves_the_agent_over_https(
    proxy: tuple[str, ssl.SSLContext],
) -> None:
    base, trust = proxy
    with httpx.Client(base_url=base, verify=trust, timeout=30) as client:
        page = client.get("/agent/")
        assert page.status_code == 200
        assert page.headers["strict-transport-security"].startswith("max-age=31536000")
        # The page's assets resolve under the prefix (relative URLs).
        assert 'src="static/app.js"' in page.text
        assert client.get("/agent/static/app.js").status_code == 200

        csrf = client.get("/agent/api/auth/csrf")
        cookie = csrf.headers["set-cookie"]
        assert "Secure" in cookie
        assert "Path=/agent" in cookie
        signed = client.post(
            "/agent/api/auth/sign-in",
            json={"user": "sales@demo.local", "password": "demo"},
            headers={"X-CSRF-Token": csrf.json()["csrf"]},
        )
        assert signed.status_code == 200, signed.text
        for set_cookie in signed.headers.get_list("set-cookie"):
            assert "Secure" in set_cookie
            assert "Path=/agent" in set_cookie
        session_cookie = next(
            c for c in signed.headers.get_list("set-cookie") if c.startswith("erp_agent_session=")
        )
        assert "HttpOnly" in session_cookie
        client.headers["X-CSRF-Token"] = signed.json()["csrf"]
        assert client.get("/agent/api/auth/me").json()["user"] == "sales@demo.local"

        # The chat stream: each model step takes 0.5 s; through nginx the first event must
        # arrive long before the last, i.e. nothing buffers the stream.
        arrivals: list[tuple[float, str]] = []
        started = time.monotonic()
        with client.stream(
            "POST",
            "/agent/api/chat",
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
