"""The `erp-agent` command line."""

from __future__ import annotations

import typer

from demo_erp.cli import app as demo_erp_app
from erp_agent.cli import connector
from erp_agent.cli import eval as eval_cli
from erp_agent.cli import knowledge as knowledge_cli
from erp_agent.cli.ask import ask
from erp_agent.cli.chat import chat
from erp_agent.cli.demo import demo
from erp_agent.cli.serve import serve
from erp_agent.cli.sync import sync
from erp_agent.cli.tools import tools

app = typer.Typer(
    help="erp-agent: an AI agent that works inside your ERP as the signed-in user.",
    no_args_is_help=True,
)
app.add_typer(demo_erp_app, name="demo-erp")
app.add_typer(connector.app, name="connector")
app.command(name="tools")(tools)
app.command(name="eval")(eval_cli.command)
app.command(name="ask")(ask)
app.command(name="chat")(chat)
app.command(name="demo")(demo)
app.command(name="serve")(serve)
app.add_typer(knowledge_cli.app, name="knowledge")
app.command(name="sync")(sync)


@app.callback()
def main() -> None:
    """erp-agent command line."""
