"""The optional rerankers, and the `knowledge` CLI on a temporary index."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from erp_agent.cli import knowledge as knowledge_cli
from erp_agent.errors import ConfigError, ModelError
from erp_agent.retrieval.documents import Document, Kind, Scope
from erp_agent.retrieval.embeddings import default_embedder
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.rerank import HttpReranker, OnnxCrossEncoder
from erp_agent.retrieval.retriever import Retriever


def test_http_reranker_reorders_the_top_hits(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        # Prefers the passage mentioning "payroll", whatever the first stage said.
        results = [
            {"index": i, "relevance_score": 1.0 if "payroll" in d else 0.1}
            for i, d in enumerate(body["documents"])
        ]
        return httpx.Response(200, json={"results": results})

    index = SQLiteIndex(tmp_path / "r.sqlite")
    texts = [
        "leave approval by the approver",
        "payroll entry creates salary slips",
        "leave balance",
    ]
    docs = [Document(key=f"k{i}", kind=Kind.KNOWLEDGE, tenant="t", title=f"T{i}", text=t)
            for i, t in enumerate(texts)]  # fmt: skip
    index.upsert(
        [d.embedded(v) for d, v in zip(docs, default_embedder().embed(texts), strict=True)]
    )
    reranker = HttpReranker("http://rerank.test", "bge-reranker",
                            transport=httpx.MockTransport(handler))  # fmt: skip
    plain = Retriever(index, default_embedder()).search("leave", Scope("t"), limit=3)
    assert plain[0].doc.key != "k1"
    reranked = Retriever(index, default_embedder(), reranker).search("leave", Scope("t"), limit=3)
    assert reranked[0].doc.key == "k1"

    broken = HttpReranker("http://rerank.test", "m",
                          transport=httpx.MockTransport(lambda r: httpx.Response(503)))  # fmt: skip
    with pytest.raises(ModelError, match="rerank endpoint failed"):
        broken.score("q", ["a"])


def test_onnx_cross_encoder_needs_a_provisioned_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"has no model\.onnx"):
        OnnxCrossEncoder(tmp_path)


def test_knowledge_cli_indexes_then_skips_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERP_AGENT_INDEX_URL", f"sqlite:///{tmp_path / 'cli.sqlite'}")
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "returns.md").write_text(
        "---\ntitle: Returns\nmodule: selling\n---\n## Credit notes\nA credit note reverses an invoice.\n"
    )
    app = typer.Typer()
    app.add_typer(knowledge_cli.app, name="knowledge")
    runner = CliRunner()
    first = runner.invoke(app, ["knowledge", "index", str(folder)])
    assert first.exit_code == 0, first.output
    assert "1 indexed (1 chunks), 0 unchanged" in first.output
    second = runner.invoke(app, ["knowledge", "index", str(folder)])
    assert "0 indexed (0 chunks), 1 unchanged" in second.output
    found = runner.invoke(app, ["knowledge", "search", "how do I reverse an invoice"])
    assert "Returns > Credit notes" in found.output
