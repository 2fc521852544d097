"""`erp-agent drill REF --as USER`: the documents behind one figure of an answer.

REF comes from `erp-agent ask --json` (a table's or chart's ``drills``, a definition's
``drill``) or from a link MCP or the OpenAI-compatible API gave (``?drill=REF``). It opens only
for the user the figure was computed for, for a few days; the store must be the one the answer
was kept in (the same ``ERP_AGENT_DATA_DIR`` or ``ERP_AGENT_DATABASE_URL``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from erp_agent.channels.drill import Opened, open_figure
from erp_agent.cli._agent import Agent, run_agent
from erp_agent.cli._common import console, err_console
from erp_agent.cli.ask import ErpUrlOption, UserOption


def drill(
    ref: Annotated[str, typer.Argument(help="The figure's reference, e.g. res_AbC123.r0.")],
    user: UserOption,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print {ref, title, figure, listed, notes, rows} as JSON."),
    ] = False,
    erp_url: ErpUrlOption = None,
) -> None:
    """Open the documents behind one figure (a REF from `ask --json` or a link), as USER."""

    async def work(agent: Agent) -> Opened:
        return await open_figure(agent.runtime, agent.session, ref)

    opened = run_agent(user, None, work, erp_url)
    if opened.block is None or opened.data is None:
        err_console.print(f"[red]Refused:[/] {opened.outcome.message}", soft_wrap=True)
        raise typer.Exit(1)
    if json_output:
        out = {**opened.summary, "result_id": opened.result_id, "rows": opened.data.get("rows")}
        typer.echo(json.dumps(out, default=str, ensure_ascii=False))
        return
    from erp_agent.cli._render import print_blocks

    listed, figure = opened.data["listed"], opened.data["figure"]
    unit = f" {figure['currency']}" if figure.get("currency") else ""
    same = (
        "the figure, exactly"
        if listed.get("matches")
        else (f"the figure was {figure.get('value')}{unit} over {figure.get('records')} records")
    )
    console.print(
        f"[bold]{listed.get('records')} records · {listed.get('value')}{unit}[/] — {same}"
    )
    print_blocks(console, [opened.block])
    for note in opened.data.get("notes") or []:
        console.print(f"[yellow]{note}[/]")
