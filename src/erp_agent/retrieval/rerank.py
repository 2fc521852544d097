"""Optional second-stage rerankers (off by default: no wheel ships cross-encoder weights, and
a cross-encoder costs ~200 ms per 50 fact cards on 2 cores, so rerank only the top few)."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from erp_agent.errors import ConfigError, ModelError

if TYPE_CHECKING:
    import onnxruntime as ort  # type: ignore[import-untyped]
    from tokenizers import Tokenizer


class Reranker(ABC):
    """Scores (query, passage) pairs; higher is more relevant. Scores need not be calibrated."""

    @abstractmethod
    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class OnnxCrossEncoder(Reranker):
    """A cross-encoder (e.g. ms-marco-MiniLM-L6-v2) exported to ONNX, read from a local folder
    holding ``model.onnx`` and ``tokenizer.json``; nothing is downloaded."""

    def __init__(self, path: str | Path, *, max_tokens: int = 512, batch_size: int = 16) -> None:
        self.path = Path(path)
        for name in ("model.onnx", "tokenizer.json"):
            if not (self.path / name).is_file():
                raise ConfigError(
                    f"reranker folder {self.path} has no {name}. Provision a cross-encoder "
                    "exported to ONNX there, or leave ERP_AGENT_RERANKER unset (off)."
                )
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._loaded: tuple[ort.InferenceSession, Tokenizer] | None = None

    def _load(self) -> tuple[ort.InferenceSession, Tokenizer]:
        with self._lock:
            if self._loaded is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
                tokenizer.enable_truncation(self.max_tokens)
                tokenizer.enable_padding()
                session = ort.InferenceSession(
                    str(self.path / "model.onnx"), providers=["CPUExecutionProvider"]
                )
                self._loaded = (session, tokenizer)
            return self._loaded

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        import numpy as np  # with the model, not when the module is imported

        session, tokenizer = self._load()
        wanted = {i.name for i in session.get_inputs()}
        scores: list[float] = []
        for start in range(0, len(passages), self.batch_size):
            pairs = [(query, p) for p in passages[start : start + self.batch_size]]
            encodings = tokenizer.encode_batch(pairs)
            feeds = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = np.asarray(
                session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0]
            )
            scores += [float(x) for x in logits.reshape(len(pairs), -1)[:, 0]]
        return scores


class HttpReranker(Reranker):
    """A ``POST {base_url}/rerank`` endpoint in the Cohere/Jina/TEI shape:
    ``{"model", "query", "documents"}`` -> ``{"results": [{"index", "relevance_score"}]}``."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        try:
            response = self._client.post(
                "/rerank", json={"model": self.model, "query": query, "documents": list(passages)}
            )
            response.raise_for_status()
            results = response.json()["results"]
            scores = [float("-inf")] * len(passages)
            for item in results:
                scores[int(item["index"])] = float(item["relevance_score"])
        except (httpx.HTTPError, KeyError, ValueError, IndexError) as exc:
            raise ModelError(f"rerank endpoint failed: {exc}") from exc
        return scores

    def close(self) -> None:
        self._client.close()
