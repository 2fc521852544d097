"""The HTTP channel: FastAPI app, SSE chat stream, the web app (chat + admin)."""

from erp_agent.server.app import create_app
from erp_agent.server.model_switch import ModelChoice, ModelProvider, ModelSwitch

__all__ = ["ModelChoice", "ModelProvider", "ModelSwitch", "create_app"]
