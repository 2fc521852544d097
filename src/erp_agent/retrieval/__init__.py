"""Hybrid retrieval over ERP fact cards and knowledge passages.

    retriever = make_retriever()                      # index + embedder (+ reranker) from settings
    kb = KnowledgeBase(retriever, tenant)             # Markdown knowledge: index_path, search,
                                                      # knowledge_context(query, budget_tokens)
    RecordSync(connector, catalog, retriever.index, retriever.embedder, service_cred).sync()
    retriever.search(query, Scope(tenant, branches=..., entities=...))

Dense (MiniLM, cosine) and keyword (FTS5 / tsvector) legs each return their top 60 inside the
scope; reciprocal rank fusion (k=60) merges them; an exact document id in the query ranks first.
"""

from erp_agent.config import RetrievalSettings
from erp_agent.retrieval.documents import Batch, Document, Hit, Kind, Scope
from erp_agent.retrieval.embeddings import (
    Embedder,
    MiniLMEmbedder,
    OpenAICompatibleEmbedder,
    default_embedder,
)
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.knowledge import KnowledgeBase, Passage
from erp_agent.retrieval.rerank import HttpReranker, OnnxCrossEncoder, Reranker
from erp_agent.retrieval.retriever import Retriever
from erp_agent.retrieval.settings import make_retriever
from erp_agent.retrieval.sync import RecordSync, start_sync_task

__all__ = [
    "Batch",
    "Document",
    "Embedder",
    "Hit",
    "HttpReranker",
    "Index",
    "Kind",
    "KnowledgeBase",
    "MiniLMEmbedder",
    "OnnxCrossEncoder",
    "OpenAICompatibleEmbedder",
    "Passage",
    "RecordSync",
    "Reranker",
    "RetrievalSettings",
    "Retriever",
    "Scope",
    "default_embedder",
    "make_retriever",
    "start_sync_task",
]
