"""`erp-agent ask "…" --as USER`: one question, one answer (or JSON for scripts)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from erp_agent.cli._agent import Agent, run_agent
from erp_agent.cli._common import console, err_console
from erp_agent.cli._render import print_blocks, progress_line
from erp_agent.engine.events import EventBus
from erp_agent.engine.response import TurnResponse

UserOption = Annotated[
    str,
    typer.Option(
        "--as", help="The ERP user to act as (asks for the password, or ERP_AGENT_PASSWORD)."
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="offline, or provider:model (e.g. openai:gpt-4.1); default: the configured model.",
    ),
]


def as_json(response: TurnResponse) -> dict[str, Any]:
    full = response.as_dict()
    return {key: full[key] for key in ("blocks", "tools_called", "usage", "model")}


def ask(
    question: Annotated[str, typer.Argument(help="What to ask, in plain words.")],
    user: UserOption,
    model: ModelOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print {blocks, tools_called, usage, model}.")
    ] = False,
) -> None:
    """Ask one question as USER and print the answer."""

    async def work(agent: Agent) -> TurnResponse:
        bus = EventBus()
        if json_output:
            return await agent.engine.run_turn(agent.session, question, bus=bus)
        with progress_line(err_console, bus):
            return await agent.engine.run_turn(agent.session, question, bus=bus)

    response = run_agent(user, model, work)
    if json_output:
        typer.echo(json.dumps(as_json(response), default=str, ensure_ascii=False))
        return
    print_blocks(console, response.blocks)
    if any(b.get("type") == "proposal" for b in response.blocks):
        console.print(
            "[yellow]Nothing was written.[/] Confirm proposals in `erp-agent chat` or the web app."
        )
