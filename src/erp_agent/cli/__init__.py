"""The `erp-agent` command line.

Commands are imported when they run (see _lazy.py): `erp-agent --help` loads none of them.
"""

from __future__ import annotations

import typer

from erp_agent.cli._lazy import LazyCommand, lazy_group

COMMANDS = [
    LazyCommand("demo-erp", "demo_erp.cli:app", "The bundled demo ERP: a Frappe-compatible system of record."),
    LazyCommand("connector", "erp_agent.cli.connector:app", "Check the connection to the ERP."),
    LazyCommand("tools", "erp_agent.cli.tools:tools", "Sign in as USER and list the tools they are offered (role policy ∩ what the ERP grants)."),
    LazyCommand("eval", "erp_agent.cli.eval:command", "Score a model on the eval suites; exit 1 when a suite's gate fails."),
    LazyCommand("ask", "erp_agent.cli.ask:ask", "Ask one question as USER and print the answer."),
    LazyCommand("drill", "erp_agent.cli.drill:drill", "Open the documents behind one figure (a REF from `ask --json` or a link), as USER."),
    LazyCommand("chat", "erp_agent.cli.chat:chat", "Chat with the agent as USER: live progress, tables, charts, proposals confirmed y/n; follow-ups refer to earlier answers, and a question with choices takes a number."),
    LazyCommand("demo", "erp_agent.cli.demo:demo", "Start the demo: demo ERP + agent server + web app. Ctrl-C stops everything."),
    LazyCommand("mcp", "erp_agent.cli.mcp:mcp", "Serve MCP over stdio as USER: the user's tools, through the gateway; writes only as proposals the user confirms."),
    LazyCommand("serve", "erp_agent.cli.serve:serve", "Serve the web app and API for the ERP at ERP_AGENT_ERP_URL (see docs/configuration.md)."),
    LazyCommand("worker", "erp_agent.cli.worker:worker", "Run background turns from the queue at ERP_AGENT_QUEUE_URL (Celery); start as many as you need."),
    LazyCommand("scan", "erp_agent.cli.scan:scan", "Scan FILE as USER into a draft Purchase Invoice or Sales Order, then confirm it."),
    LazyCommand("knowledge", "erp_agent.cli.knowledge:app", "The knowledge base: index Markdown documents, search passages."),
    LazyCommand("catalog", "erp_agent.cli.catalog:app", "The catalog: `catalog suggest --as USER` proposes overlay entries for the ERP's custom fields."),
    LazyCommand("doctor", "erp_agent.cli.doctor:doctor", "Check the configuration end to end (ERP, users, key, model, store, Redis, queue and worker, index, proxy, single sign-on): one line per check; exit 1 if any fails."),
    LazyCommand("subscriptions", "erp_agent.cli.subscriptions:app", "Subscriptions: list, run due ones now, pause, resume, delete; enable a user."),
    LazyCommand("sync", "erp_agent.cli.sync:sync", "Sync ERP records into the search index as fact cards, as the service user (ERP_AGENT_SYNC_USER / ERP_AGENT_SYNC_PASSWORD; demo: admin@demo.local / demo)."),
]  # fmt: skip

# Plain help: Typer's Rich help formatter alone takes longer to import than the 0.5 s budget.
app = typer.Typer(
    cls=lazy_group(COMMANDS),
    help="erp-agent: an AI agent that works inside your ERP as the signed-in user.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.callback()
def main() -> None:
    """erp-agent command line."""
