"""A deployment's own catalog entries outside the code (ERP_AGENT_SITE_DIR): a custom field the
demo ERP has is proposed by `erp-agent catalog suggest`, added through the overlay, and read from
the ERP as the user; an overlay with a typo is refused at start with a clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DemoERP
from erp_agent.catalog import load_catalog
from erp_agent.config import Settings
from erp_agent.errors import CatalogError
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
ENTITY = "customer:\n  fields:\n    account_manager: string filter -- Account manager\n"
MAP = "entities:\n  customer:\n    fields:\n      account_manager: custom_account_manager\n"


def site(tmp_path: Path, entities: str = ENTITY, maps: str = MAP) -> Path:
    root = tmp_path / "site"
    (root / "catalog/data/entities").mkdir(parents=True)
    (root / "catalog/maps/erpnext").mkdir(parents=True)
    (root / "catalog/data/entities/selling.yaml").write_text(entities, encoding="utf-8")
    (root / "catalog/maps/erpnext/selling.yaml").write_text(maps, encoding="utf-8")
    return root


def test_suggest_proposes_the_erps_custom_field(demo_erp: DemoERP, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERP_AGENT_")}
    env |= {"ERP_AGENT_ERP_URL": demo_erp.url, "ERP_AGENT_PASSWORD": "demo",
            "ERP_AGENT_DATA_DIR": str(tmp_path), "COLUMNS": "200"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "erp_agent", "catalog", "suggest", "--as", "admin@demo.local"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "# catalog/data/entities/selling.yaml" in done.stdout
    assert "account_manager: string filter -- Custom Account Manager (custom field" in done.stdout
    assert "account_manager: custom_account_manager" in done.stdout
    assert "branch" not in done.stdout  # a custom field the catalog already has


async def test_an_overlay_field_is_offered_and_read_from_the_erp(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    root = site(tmp_path)
    catalog = load_catalog(site=root)
    assert "account_manager" in catalog.entity("customer").fields
    assert "account_manager" not in load_catalog().entity("customer").fields  # packaged as is
    settings = Settings(erp_url=demo_erp.url, data_dir=str(tmp_path), site_dir=str(root))
    runtime = await Runtime.create(settings, store=MemoryStore())
    try:
        assert "account_manager" in runtime.catalog.entity("customer").fields
        cred = await runtime.connector.login("admin@demo.local", "demo")
        page = await runtime.connector.list(
            cred, "customer", fields=["id", "name", "account_manager"], limit=3
        )
        assert page.records
        assert all("account_manager" in row for row in page.records)
    finally:
        await runtime.aclose()


def test_an_overlay_typo_is_refused_with_the_name_it_meant(tmp_path: Path) -> None:
    root = site(tmp_path, entities=ENTITY.replace("customer:", "custmer:"))
    with pytest.raises(CatalogError) as caught:
        load_catalog(site=root)
    message = str(caught.value)
    assert (
        "site overlay data/entities/selling.yaml: entity 'custmer' is not in the catalog" in message
    )
    assert "Did you mean 'customer'?" in message


def test_a_site_folder_without_a_catalog_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="has no 'catalog' folder"):
        load_catalog(site=tmp_path)


async def test_site_knowledge_documents_are_indexed_with_the_rest(tmp_path: Path) -> None:
    from erp_agent.config import RetrievalSettings
    from erp_agent.retrieval.knowledge import KnowledgeBase
    from erp_agent.retrieval.settings import make_retriever
    from erp_agent.server.knowledge import IndexedKnowledge

    root = site(tmp_path)
    (root / "knowledge").mkdir()
    (root / "knowledge/returns-policy.md").write_text(
        "---\ntitle: Returns policy of Savanna Trading\nmodule: selling\n---\n# Returns\n\n"
        "Goods may be returned within 14 days with the original delivery note; the credit note "
        "is raised by the accounts team.\n",
        encoding="utf-8",
    )
    settings = Settings(data_dir=str(tmp_path), retrieval=RetrievalSettings(embeddings="none"))
    kb = KnowledgeBase(make_retriever(settings), "default")
    indexed = await IndexedKnowledge(kb, tmp_path / "uploads", root).reindex()
    assert "returns-policy" in indexed["indexed"]
    found = kb.search("returned within 14 days delivery note")
    assert found
    assert found[0].doc_id == "returns-policy"


async def test_site_prompt_sections_reach_the_model_and_an_empty_one_is_refused(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    from erp_agent.errors import ConfigError
    from erp_agent.models.testing import ScriptedModel

    root = site(tmp_path)
    (root / "prompts").mkdir()
    (root / "prompts/10-house-style.md").write_text(
        "Savanna Trading calls customers 'accounts'.", encoding="utf-8"
    )
    settings = Settings(erp_url=demo_erp.url, data_dir=str(tmp_path), site_dir=str(root))
    runtime = await Runtime.create(settings, store=MemoryStore())
    try:
        model = ScriptedModel(ScriptedModel.reply("Noted."))
        session = await runtime.sign_in("sales@demo.local", "demo")
        await runtime.engine(model).run_turn(session, "hello")
        system = model.requests[0].messages[0].content or ""
        assert "Savanna Trading calls customers 'accounts'." in system
    finally:
        await runtime.aclose()
    (root / "prompts/20-empty.md").write_text("  \n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"20-empty\.md is empty"):
        await Runtime.create(settings, store=MemoryStore())
