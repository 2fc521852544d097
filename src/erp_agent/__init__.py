"""erp-agent: an AI agent that works inside a company's ERP as the signed-in user."""

__version__ = "0.1.0"
