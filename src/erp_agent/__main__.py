"""`python -m erp_agent` runs the command line."""

from erp_agent.cli import app

app()
