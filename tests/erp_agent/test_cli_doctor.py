"""`erp-agent doctor` against the demo ERP: one line per check, exit 0 when all pass; an ERP that
cannot be reached or production mode without a session key is a FAIL line and exit 1, never a
traceback; no secret is printed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

from conftest import DemoERP
from demo_erp.server import free_port


def doctor(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ERP_AGENT_")}
    clean |= {"ERP_AGENT_DATA_DIR": str(tmp_path), "ERP_AGENT_EMBEDDINGS": "none",
              "COLUMNS": "200"} | env  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "erp_agent", "doctor"],
        env=clean, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def service_key(demo: DemoERP, user: str) -> tuple[str, str]:
    conn = sqlite3.connect(demo.path)
    try:
        key = conn.execute('select api_key from "tabUser" where name = ?', (user,)).fetchone()[0]
        secret = conn.execute(
            "select api_secret from __ApiSecrets where user = ?", (user,)
        ).fetchone()[0]
        return str(key), str(secret)
    finally:
        conn.close()


def test_doctor_passes_against_the_demo_erp(demo_erp: DemoERP, tmp_path: Path) -> None:
    key, secret = service_key(demo_erp, "Administrator")
    session_key = f"{Fernet.generate_key().decode()},{Fernet.generate_key().decode()}"
    done = doctor(
        {
            "ERP_AGENT_ERP_URL": demo_erp.url,
            "ERP_AGENT_MODE": "production",
            "ERP_AGENT_SESSION_KEY": session_key,
            "ERP_AGENT_SERVICE_USER": "Administrator",
            "ERP_AGENT_SERVICE_API_KEY": key,
            "ERP_AGENT_SERVICE_API_SECRET": secret,
        },
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    names = [line.split()[1] for line in lines]
    for expected in ("configuration", "erp", "service", "session", "model", "store", "index",
                     "proxy", "single"):  # fmt: skip
        assert expected in names, lines
    assert all(line.split()[0] in ("ok", "warn") for line in lines), lines
    service = next(line for line in lines if line.split()[1] == "service")
    assert "signed in as Administrator" in service
    assert "Frappe 15" in service
    assert "2 key(s) set" in done.stdout
    for secret_text in (secret, *session_key.split(",")):
        assert secret_text not in done.stdout + done.stderr


def test_an_unreachable_erp_and_a_missing_key_in_production_are_fail_lines(
    tmp_path: Path,
) -> None:
    done = doctor(
        {"ERP_AGENT_ERP_URL": f"http://127.0.0.1:{free_port()}", "ERP_AGENT_MODE": "production"},
        tmp_path,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    fails = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert any("Cannot reach the ERP" in line for line in fails), done.stdout
    assert any("ERP_AGENT_SESSION_KEY is not set" in line for line in fails), done.stdout


def test_a_bad_setting_is_one_fail_line(tmp_path: Path) -> None:
    done = doctor({"ERP_AGENT_TRUSTED_PROXIES": "127.0.0.1,proxy.local"}, tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert "'proxy.local', which is not an address" in done.stdout
