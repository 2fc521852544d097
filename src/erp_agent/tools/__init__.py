"""Tools: what the model can do. Generated from the catalog, plus hand-written modules.

Nothing runs a tool but the gateway (``erp_agent.gateway``).
"""
