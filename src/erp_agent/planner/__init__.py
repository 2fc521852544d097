"""The offline planner: a deterministic, catalog-driven ChatModel that needs no LLM."""

from erp_agent.planner.fallback import FallbackModel
from erp_agent.planner.offline_model import OfflinePlanner

__all__ = ["FallbackModel", "OfflinePlanner"]
