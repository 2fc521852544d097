"""`erp-agent ask "…" --as USER`: one question, one answer (or JSON for scripts)."""

from __future__ import annotations

import json
from typing import Annotated, Any, cast

import typer

from erp_agent.cli._agent import Agent, run_agent
from erp_agent.cli._common import console, err_console
from erp_agent.cli._model import BaseUrlOption, ModelOption, ModelSettingOption
from erp_agent.engine.response import TurnResponse
from erp_agent.events import EventBus
from erp_agent.tools.base import Definition

UserOption = Annotated[
    str,
    typer.Option(
        "--as", help="The ERP user to act as (asks for the password, or ERP_AGENT_PASSWORD)."
    ),
]
ErpUrlOption = Annotated[
    str | None,
    typer.Option(
        "--erp-url", help="The ERP's address (default: the configured ERP_AGENT_ERP_URL)."
    ),
]


def _definitions(response: TurnResponse) -> list[Definition]:
    """How the answer's figures were computed: every call's definition but the look-ups of
    where a name lives ("name like %Nairo%"), unless nothing else was called."""
    from erp_agent.planner.read_as import is_lookup

    calls = [c for c in response.tools_called if isinstance(c.get("definition"), dict)]
    kept = [c for c in calls if not is_lookup(c.get("arguments") or {})] or calls[-1:]
    seen: list[Definition] = []
    for call in kept:
        if call["definition"] not in seen:
            seen.append(cast(Definition, call["definition"]))  # the turn's JSON record
    return seen


def as_json(response: TurnResponse) -> dict[str, Any]:
    full = response.as_dict()
    return {
        "conversation_id": full["conversation_id"],
        "blocks": full["blocks"],
        "tools_called": full["tools_called"],
        "usage": full["usage"],
        "model": full["model"],
    }


def ask(
    question: Annotated[str, typer.Argument(help="What to ask, in plain words.")],
    user: UserOption,
    model: ModelOption = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print {conversation_id, blocks, tools_called, usage, model}."),
    ] = False,
    conversation: Annotated[
        str | None,
        typer.Option(
            "--conversation",
            help="Continue this conversation (its id is printed with every answer), so "
            "follow-ups such as 'and last year?' or a reply to a question work.",
        ),
    ] = None,
    erp_url: ErpUrlOption = None,
    base_url: BaseUrlOption = None,
    model_setting: ModelSettingOption = None,
) -> None:
    """Ask one question as USER and print the answer."""

    async def work(agent: Agent) -> TurnResponse:
        bus = EventBus()
        run = agent.engine.run_turn
        if json_output:
            return await run(agent.session, question, conversation_id=conversation, bus=bus)
        # Rich's Markdown and syntax highlighting load only for output a person reads.
        from erp_agent.cli._render import progress_line

        with progress_line(err_console, bus):
            return await run(agent.session, question, conversation_id=conversation, bus=bus)

    response = run_agent(user, model, work, erp_url, base_url, model_setting)
    if json_output:
        typer.echo(json.dumps(as_json(response), default=str, ensure_ascii=False))
        return
    from erp_agent.cli._render import definition_view, print_blocks

    print_blocks(console, response.blocks)
    if not any(isinstance(b.get("definition"), dict) for b in response.blocks):
        # A figure answered in words still says how it was computed.
        for definition in _definitions(response):
            console.print(definition_view(definition))
    console.print(f"[dim]conversation {response.conversation_id}[/]")
    if any(b["type"] == "proposal" for b in response.blocks):
        console.print(
            "[yellow]Nothing was written.[/] Confirm proposals in `erp-agent chat` or the web app."
        )
