"""Retrieval settings (environment ``ERP_AGENT_*``) and the factories that turn them into an
index, an embedder, a reranker and a retriever."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from erp_agent.errors import ConfigError
from erp_agent.retrieval.embeddings import (
    MINILM_DIM,
    Embedder,
    OpenAICompatibleEmbedder,
    default_embedder,
)
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.rerank import HttpReranker, OnnxCrossEncoder, Reranker
from erp_agent.retrieval.retriever import Retriever


class RetrievalSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ERP_AGENT_", extra="ignore", frozen=True)

    index_url: str | None = Field(
        None,
        description="sqlite:///relative/or//absolute/path.sqlite, or a postgresql:// DSN; "
        "unset: index.sqlite in the data directory, for every command alike.",
    )
    data_dir: str = Field("data", description="The data directory (ERP_AGENT_DATA_DIR).")
    index_tenant: str = Field("default", description="Tenant (org) the CLI indexes for.")
    embeddings: Literal["minilm", "openai", "none"] = "minilm"
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    embeddings_dim: int = MINILM_DIM
    embeddings_api_key: SecretStr | None = None
    reranker: Literal["off", "onnx", "http"] = "off"
    reranker_path: str | None = None
    reranker_url: str | None = None
    reranker_model: str | None = None
    reranker_api_key: SecretStr | None = None
    sync_user: str | None = Field(None, description="Service user the record sync reads as.")
    sync_password: SecretStr | None = None
    sync_interval: float = Field(300.0, gt=0, description="Seconds between background syncs.")

    @classmethod
    def in_data_dir(cls, data_dir: str) -> RetrievalSettings:
        """These settings for the main settings' data directory (which a TOML file may set)."""
        return cls().model_copy(update={"data_dir": data_dir})


def make_embedder(settings: RetrievalSettings) -> Embedder | None:
    if settings.embeddings == "none":
        return None
    if settings.embeddings == "minilm":
        return default_embedder()
    key = settings.embeddings_api_key
    return OpenAICompatibleEmbedder(
        settings.embeddings_url or "",
        settings.embeddings_model or "",
        settings.embeddings_dim,
        api_key=key.get_secret_value() if key else None,
    )


def make_reranker(settings: RetrievalSettings) -> Reranker | None:
    if settings.reranker == "onnx":
        if not settings.reranker_path:
            raise ConfigError("ERP_AGENT_RERANKER=onnx needs ERP_AGENT_RERANKER_PATH (a folder).")
        return OnnxCrossEncoder(settings.reranker_path)
    if settings.reranker == "http":
        if not settings.reranker_url or not settings.reranker_model:
            raise ConfigError(
                "ERP_AGENT_RERANKER=http needs ERP_AGENT_RERANKER_URL and ERP_AGENT_RERANKER_MODEL."
            )
        key = settings.reranker_api_key
        return HttpReranker(
            settings.reranker_url,
            settings.reranker_model,
            api_key=key.get_secret_value() if key else None,
        )
    return None


def index_url(settings: RetrievalSettings) -> str:
    """Where the index lives: the one answer `sync`, `serve`, `demo` and `knowledge` share."""
    if settings.index_url:
        return settings.index_url
    path = Path(settings.data_dir) / "index.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def open_index(settings: RetrievalSettings) -> Index:
    url = index_url(settings)
    dim = settings.embeddings_dim if settings.embeddings == "openai" else MINILM_DIM
    if url.startswith("sqlite:///"):
        from erp_agent.retrieval.index_sqlite import SQLiteIndex

        return SQLiteIndex(url.removeprefix("sqlite:///"), dim=dim)
    if url.startswith(("postgresql://", "postgres://")):
        from erp_agent.retrieval.index_postgres import PostgresIndex

        return PostgresIndex(url, dim=dim)
    raise ConfigError(
        f"ERP_AGENT_INDEX_URL={url!r} is neither sqlite:///PATH nor postgresql://…; "
        "e.g. sqlite:///data/index.sqlite"
    )


def make_retriever(settings: RetrievalSettings | None = None) -> Retriever:
    settings = settings or RetrievalSettings()
    return Retriever(open_index(settings), make_embedder(settings), make_reranker(settings))
