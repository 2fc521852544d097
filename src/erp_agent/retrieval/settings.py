"""The factories that turn the retrieval settings (``Settings.retrieval``, see erp_agent.config)
into an index, an embedder, a reranker and a retriever."""

from __future__ import annotations

from pathlib import Path

from erp_agent.config import MINILM_DIM, Settings, load_settings
from erp_agent.errors import ConfigError
from erp_agent.models import presets
from erp_agent.retrieval.embeddings import (
    Embedder,
    OpenAICompatibleEmbedder,
    default_embedder,
)
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.rerank import HttpReranker, OnnxCrossEncoder, Reranker
from erp_agent.retrieval.retriever import Retriever


def make_embedder(settings: Settings) -> Embedder | None:
    retrieval = settings.retrieval
    kind, url, model = embeddings_endpoint(settings)
    if kind == "none":
        return None
    if kind == "minilm":
        return default_embedder()
    key = retrieval.embeddings_api_key
    return OpenAICompatibleEmbedder(
        url, model, retrieval.embeddings_dim, api_key=key.get_secret_value() if key else None
    )


def embeddings_endpoint(settings: Settings) -> tuple[str, str, str]:
    """(kind, base URL, model). A model named with a preset (``ollama:nomic-embed-text``) means
    that server's embeddings endpoint at its default address, unless ERP_AGENT_EMBEDDINGS or
    ERP_AGENT_EMBEDDINGS_URL say otherwise."""
    retrieval = settings.retrieval
    kind, url, model = retrieval.embeddings, retrieval.embeddings_url, retrieval.embeddings_model
    found = presets.split(model) if model else None
    if found is not None:
        preset, model = presets.PRESETS[found[0]], found[1]
        if "embeddings" not in retrieval.model_fields_set:
            kind = "openai"
        public = "https://api.openai.com/v1" if found[0] == "openai" else None
        url = url or preset.base_url or public
    return kind, url or "", model or ""


def make_reranker(settings: Settings) -> Reranker | None:
    retrieval = settings.retrieval
    if retrieval.reranker == "onnx":
        if not retrieval.reranker_path:
            raise ConfigError("ERP_AGENT_RERANKER=onnx needs ERP_AGENT_RERANKER_PATH (a folder).")
        return OnnxCrossEncoder(retrieval.reranker_path)
    if retrieval.reranker == "http":
        if not retrieval.reranker_url or not retrieval.reranker_model:
            raise ConfigError(
                "ERP_AGENT_RERANKER=http needs ERP_AGENT_RERANKER_URL and ERP_AGENT_RERANKER_MODEL."
            )
        key = retrieval.reranker_api_key
        return HttpReranker(
            retrieval.reranker_url,
            retrieval.reranker_model,
            api_key=key.get_secret_value() if key else None,
        )
    return None


def index_url(settings: Settings) -> str:
    """Where the index lives: the one answer `sync`, `serve`, `demo` and `knowledge` share."""
    if settings.retrieval.index_url:
        return settings.retrieval.index_url
    path = Path(settings.data_dir) / "index.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def open_index(settings: Settings) -> Index:
    url = index_url(settings)
    retrieval = settings.retrieval
    dim = retrieval.embeddings_dim if retrieval.embeddings == "openai" else MINILM_DIM
    if url.startswith("sqlite:///"):
        from erp_agent.retrieval.index_sqlite import SQLiteIndex

        return SQLiteIndex(url.removeprefix("sqlite:///"), dim=dim)
    if url.startswith(("postgresql://", "postgres://")):
        from erp_agent.retrieval.index_postgres import PostgresIndex

        return PostgresIndex(url, dim=dim, pool_size=retrieval.index_pool_size)
    raise ConfigError(
        f"ERP_AGENT_INDEX_URL={url!r} is neither sqlite:///PATH nor postgresql://…; "
        "e.g. sqlite:///data/index.sqlite"
    )


def make_retriever(settings: Settings | None = None) -> Retriever:
    settings = settings or load_settings()
    return Retriever(open_index(settings), make_embedder(settings), make_reranker(settings))
