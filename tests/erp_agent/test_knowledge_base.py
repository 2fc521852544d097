"""Knowledge ingestion: chunking, checksums (unchanged files cost no embeddings), per-document
replacement, passage search, the context budget and the knowledge.search tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_fixtures import CountingEmbedder

from erp_agent.calls.session import Session
from erp_agent.connectors.credentials import Credential
from erp_agent.retrieval.chunking import chunk, parse
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.knowledge import KnowledgeBase, packaged_root
from erp_agent.retrieval.retriever import Retriever
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import knowledge as knowledge_tools

DOC = """---
title: Demo process
module: selling
entities: [sales_invoice]
---
# Demo process

An introduction.

## Short section
Two sentences here. Nothing more.

## Long section
{long}
"""


def test_chunks_are_cut_at_h2_and_labelled() -> None:
    long = " ".join(f"word{i}" for i in range(400))
    doc = parse("demo", DOC.format(long=long))
    assert (doc.title, doc.module, doc.entities) == ("Demo process", "selling", ("sales_invoice",))
    chunks = chunk(doc, max_words=160, overlap=30)
    labels = [c.label for c in chunks]
    assert labels[:2] == ["Demo process > Overview", "Demo process > Short section"]
    assert set(labels[2:]) == {"Demo process > Long section"}
    long_parts = [c.text.split() for c in chunks[2:]]
    assert len(long_parts) == 3
    assert all(len(p) <= 160 for p in long_parts)
    assert long_parts[0][-30:] == long_parts[1][:30]  # overlap
    assert long_parts[-1][-1] == "word399"
    assert parse("demo", DOC.format(long=long)).checksum == doc.checksum
    assert parse("demo", DOC.format(long=long + " x")).checksum != doc.checksum


def test_starter_knowledge_base_has_the_standard_flows() -> None:
    names = {p.stem for p in packaged_root().glob("*.md")}
    assert {"docstatus", "order-to-cash", "procure-to-pay", "stock-movements",
            "period-closing", "leave", "payroll"} <= names  # fmt: skip
    for path in packaged_root().glob("*.md"):
        if path.name != "README.md":
            doc = parse(path.stem, path.read_text())
            assert doc.title, path.name
            assert doc.module, path.name


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase(Retriever(SQLiteIndex(tmp_path / "kb.sqlite"), CountingEmbedder()))


def _copy_starter(to: Path) -> Path:
    to.mkdir()
    for path in packaged_root().glob("*.md"):
        (to / path.name).write_text(path.read_text())
    return to


def test_unchanged_files_cost_no_embeddings_and_edits_replace_only_their_chunks(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    root = _copy_starter(tmp_path / "kb")
    embedder = kb.retriever.embedder
    assert isinstance(embedder, CountingEmbedder)
    first = kb.index_path(root)
    assert len(first.indexed) == 7
    assert embedder.texts == first.chunks
    index = kb.retriever.index
    leave_before = index.keys("default", parent="kb:leave")
    payroll_before = index.fetch("default", index.keys("default", parent="kb:payroll"))

    embedder.texts = 0
    again = kb.index_path(root)
    assert again.indexed == []
    assert len(again.unchanged) == 7
    assert embedder.texts == 0

    leave = root / "leave.md"
    leave.write_text(
        leave.read_text().split("## Approval")[0] + "## Carry forward\nUp to 5 days.\n"
    )
    third = kb.index_path(root)
    assert third.indexed == ["leave"]
    assert embedder.texts == third.chunks == len(index.keys("default", parent="kb:leave"))
    assert index.keys("default", parent="kb:leave") != leave_before
    titles = {d.title for d in index.fetch("default", index.keys("default", parent="kb:leave"))}
    assert "Leave - types, allocations, applications, approval > Carry forward" in titles
    assert index.fetch("default", index.keys("default", parent="kb:payroll")) == payroll_before

    (root / "payroll.md").unlink()
    assert kb.index_path(root).removed == ["payroll"]
    assert index.keys("default", parent="kb:payroll") == []


def test_paraphrase_search_cites_title_and_section(kb: KnowledgeBase) -> None:
    kb.index_path()
    passages = kb.search("I need to correct an invoice that was already submitted")
    top = [p.label for p in passages[:2]]
    assert "Document status - draft, submitted, cancelled, amended > Cancel and amend" in top
    assert passages[0].source == "Document status - draft, submitted, cancelled, amended"
    who = kb.search("who can approve a purchase order", module="buying")
    assert who[0].label.endswith("Purchase order approval workflow")
    assert all(p.module == "buying" for p in who)


def test_knowledge_context_fits_the_budget(kb: KnowledgeBase) -> None:
    kb.index_path()
    passages = kb.knowledge_context("negative stock error when delivering", budget_tokens=400)
    assert passages
    assert sum(p.tokens for p in passages) <= 400
    assert "Negative stock" in passages[0].label
    assert kb.knowledge_context("negative stock", budget_tokens=1) == []


@pytest.mark.anyio
async def test_knowledge_search_tool(kb: KnowledgeBase) -> None:
    kb.index_path()
    (tool,) = knowledge_tools.tools(kb, modules=["selling", "buying", "hr"])
    assert tool.name == "knowledge.search"
    assert tool.parameters["properties"]["module"]["enum"] == ["buying", "hr", "selling"]
    session = Session("s", "u@demo.local", Credential.session("u@demo.local", "x"), frozenset())
    ctx = ToolContext(session=session, connector=None, catalog=None)  # type: ignore[arg-type]
    assert tool.run is not None
    result = await tool.run(ctx, {"query": "how is leave approved", "module": "hr"})
    first = result["passages"][0]
    assert first["source"] == "Leave - types, allocations, applications, approval > Approval"
    assert "approver" in first["text"]


def test_an_empty_index_answers_without_embedding_the_question(tmp_path: Path) -> None:
    embedder = CountingEmbedder(fast=True)
    kb = KnowledgeBase(Retriever(SQLiteIndex(tmp_path / "empty.sqlite"), embedder), "acme")
    assert kb.knowledge_context("how do I approve a purchase order?", 500) == []
    assert embedder.calls == 0
    root = tmp_path / "kb"
    root.mkdir()
    (root / "approvals.md").write_text(
        "# Approvals\n\n## Purchase orders\n\nA manager approves purchase orders.\n",
        encoding="utf-8",
    )
    kb.index_path(root)
    embedder.calls = 0
    assert kb.knowledge_context("how do I approve a purchase order?", 500)
    assert embedder.calls == 1  # once something is indexed, the question is embedded
