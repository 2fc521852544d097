"""pgvector is not a trusted extension: in a database where only a superuser may create it, the
PostgreSQL index says which statement a superuser must run (docs/deployment.md), and so does
`erp-agent doctor`; once a superuser has created it, the same role uses the index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pg_fixtures import pg_database
from sqlalchemy.engine import make_url

from erp_agent.errors import StoreError
from erp_agent.retrieval.index_postgres import PostgresIndex

pytestmark = pytest.mark.postgres


def _plain(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def test_the_index_says_what_a_superuser_must_run(tmp_path: Path) -> None:
    with pg_database("erp_vec") as url:
        dsn = _plain(url)
        import psycopg

        with psycopg.connect(dsn) as db:
            superuser = db.execute("select rolsuper from pg_roles where rolname = current_user")
            if superuser.fetchone()[0]:  # type: ignore[index]
                pytest.skip("the test role is a superuser: it may create the extension itself")
        with pytest.raises(StoreError, match=r"CREATE EXTENSION vector") as refused:
            PostgresIndex(dsn)
        assert "superuser" in str(refused.value)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ERP_AGENT_")}
        env |= {"ERP_AGENT_INDEX_URL": dsn, "ERP_AGENT_DATA_DIR": str(tmp_path),
                "ERP_AGENT_ERP_URL": "http://127.0.0.1:9", "COLUMNS": "300"}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "erp_agent", "doctor"],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 1
        assert "Traceback" not in done.stdout + done.stderr
        index = next(line for line in done.stdout.splitlines() if line.split()[1:2] == ["index"])
        assert index.startswith("FAIL")
        assert "CREATE EXTENSION vector" in index
