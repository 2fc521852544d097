"""The one settings object: every setting documented in docs/configuration.md (generated), one
name per variable, the old flat names still read, and environment over file over default."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from erp_agent.config import EngineSettings, Group, ModelSettings, Settings, env_names
from erp_agent.config_doc import render, rows
from erp_agent.errors import ConfigError

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _all_fields() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    models: list[tuple[str, type[BaseModel]]] = [("", Settings), ("model.", ModelSettings)]
    for name, info in Settings.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, Group):
            models.append((f"{name}.", info.annotation))
    for prefix, model in models:
        found += [(prefix + n, i.description) for n, i in model.model_fields.items()]
    return found


def test_every_setting_has_a_description() -> None:
    missing = [name for name, description in _all_fields() if not (description or "").strip()]
    assert not missing, f"settings without a description (Field(description=...)): {missing}"


def test_the_reference_page_is_generated_from_the_settings() -> None:
    page = DOC.read_text(encoding="utf-8")
    assert page == render(page), (
        "docs/configuration.md is out of date with erp_agent.config: "
        "run `uv run python -m erp_agent.config_doc`"
    )
    for _, entries in rows():
        for row in entries:
            assert f"`{row.variables[0]}`" in page, f"{row.variables[0]} is not documented"


def test_no_two_settings_share_a_variable() -> None:
    seen: dict[str, str] = {}
    for _, entries in rows():
        for row in entries:
            for variable in row.variables:
                assert variable not in seen, f"{variable}: {seen.get(variable)} and {row.toml_key}"
                seen[variable] = row.toml_key


def test_the_names_before_grouping_are_still_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ERP_AGENT_INDEX_URL", "sqlite:///x.sqlite")
    monkeypatch.setenv("ERP_AGENT_EMBEDDINGS_MODEL", "text-embedding-3-small")
    monkeypatch.setenv("ERP_AGENT_SCAN_MAX_BYTES", "1234")
    monkeypatch.setenv("ERP_AGENT_TURN_DEADLINE", "7.5")
    monkeypatch.setenv("ERP_AGENT_SCAN__MAX_PAGES", "3")
    settings = Settings()
    assert settings.retrieval.index_url == "sqlite:///x.sqlite"
    assert settings.retrieval.embeddings_model == "text-embedding-3-small"
    assert (settings.scan.max_bytes, settings.scan.max_pages) == (1234, 3)
    assert settings.engine.turn_deadline == 7.5
    assert env_names("scan", "max_bytes") == [
        "ERP_AGENT_SCAN_MAX_BYTES",
        "ERP_AGENT_SCAN__MAX_BYTES",
    ]
    # An argument still wins over the environment, whether named flat or grouped.
    assert Settings(turn_deadline=2.0).engine.turn_deadline == 2.0
    assert Settings(engine=EngineSettings(max_rounds=2)).engine.turn_deadline == 60.0


def test_environment_wins_over_the_file_which_wins_over_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "erp-agent.toml"
    config.write_text(
        'erp_url = "http://erp.file"\nscan_max_pages = 7\n'
        '[retrieval]\nindex_tenant = "from-file"\nsync_interval = 5\n'
        "[engine]\nmax_rounds = 4\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("ERP_AGENT_CONFIG", str(config))
    monkeypatch.setenv("ERP_AGENT_INDEX_TENANT", "from-env")
    monkeypatch.setenv("ERP_AGENT_ENGINE__MAX_ROUNDS", "6")
    settings = Settings()
    assert settings.erp_url == "http://erp.file"
    assert settings.scan.max_pages == 7
    assert settings.retrieval.index_tenant == "from-env"
    assert settings.retrieval.sync_interval == 5
    assert settings.engine.max_rounds == 6
    assert settings.scan.max_bytes == 20_000_000


def test_a_missing_config_file_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_CONFIG", "/nonexistent/erp-agent.toml")
    with pytest.raises(ConfigError, match="not a file"):
        Settings()
