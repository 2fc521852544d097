"""`erp-agent chat --as USER`: an interactive conversation in the terminal."""

from __future__ import annotations

import asyncio
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.cli._agent import Agent, run_agent
from erp_agent.cli._common import console
from erp_agent.cli._model import BaseUrlOption, ModelOption, ModelSettingOption
from erp_agent.cli._render import choice_reply, print_blocks, progress_line
from erp_agent.cli.ask import ErpUrlOption, UserOption
from erp_agent.events import EventBus
from erp_agent.results.blocks import ChoicesBlock, ProposalBlock, proposal_block, question

EXIT_WORDS = frozenset({"exit", "quit", ":q"})


EDIT_HELP = (
    "y to write it, n to reject it, or an edit: 'qty 1 5', 'rate 2 1400', 'remove 2', "
    "'date 2026-12-05'"
)


def parse_edit(reply: str) -> dict[str, Any] | None:
    """'qty 1 5' → {"lines": [{"index": 0, "qty": "5"}]}; None when it is not an edit.

    Values are passed on as typed: the gateway checks them ("abc" or -3 is a clear error)."""
    words = reply.split()
    if len(words) == 2 and words[0].lower() == "date":
        return {"date": words[1]}
    if len(words) == 2 and words[0].lower() == "remove" and words[1].isdigit():
        return {"lines": [{"index": int(words[1]) - 1, "remove": True}]}
    if len(words) == 3 and words[0].lower() in ("qty", "rate") and words[1].isdigit():
        return {"lines": [{"index": int(words[1]) - 1, words[0].lower(): words[2]}]}
    return None


async def decide(agent: Agent, block: ProposalBlock) -> None:
    """Confirm, reject or edit one proposal; the gateway executes exactly what was shown last."""
    gateway = agent.runtime.gateway
    while True:
        reply = (
            await asyncio.to_thread(
                console.input, f"[bold]Write this to the ERP?[/] ({EDIT_HELP}) "
            )
        ).strip()
        answer = reply.lower()
        if answer in ("y", "yes"):
            outcome = await gateway.confirm(
                agent.session, str(block["id"]), str(block["payload_hash"])
            )
            break
        if answer in ("", "n", "no"):
            outcome = await gateway.reject(agent.session, str(block["id"]))
            break
        edits = parse_edit(reply)
        if edits is None:
            console.print(f"[yellow]Not understood.[/] {EDIT_HELP}.")
            continue
        edited = await gateway.revise(agent.session, str(block["id"]), edits)
        if edited.proposal is None:
            console.print(f"[red]{edited.message}[/] Nothing was changed.")
            continue
        block = proposal_block(edited.proposal)
        console.print("[green]Edited and checked by the ERP: a new proposal.[/]")
        print_blocks(console, [block])
    style = "green" if outcome.ok else "red"
    console.print(f"[{style}]{outcome.message}[/]")
    if outcome.refusal:
        console.print(f"[red]The ERP said:[/] {outcome.refusal.get('message')}")
    if outcome.conversation_message:  # the document's id and link, as kept in the conversation
        console.print(outcome.conversation_message)
    if outcome.proposal:  # the record changed: the same change against its current values
        fresh = proposal_block(outcome.proposal)
        print_blocks(console, [fresh])
        await decide(agent, fresh)


async def settle_interrupted(agent: Agent) -> None:
    """Confirms of this user that a crash or a timeout interrupted are decided first."""
    me = agent.session
    for outcome in await agent.runtime.gateway.sweep(lambda p: _mine(p.user, me)):
        console.print(f"[yellow]An earlier confirm was interrupted:[/] {outcome.message}")


async def _mine(user: str, session: Session) -> Session | None:
    return session if user == session.user else None


async def converse(agent: Agent) -> None:
    console.print(
        f"Signed in as [bold]{agent.session.user}[/]"
        + (" (read-only)" if agent.session.read_only else "")
        + ". Ask anything; an empty line or 'exit' ends the chat."
    )
    await settle_interrupted(agent)
    conversation_id: str | None = None
    choices: ChoicesBlock | None = None  # a question the last answer asked, with options
    while True:
        prompt = "[bold cyan]Choose a number, or type:[/] " if choices else "[bold cyan]You:[/] "
        try:
            message = (await asyncio.to_thread(console.input, prompt)).strip()
        except (EOFError, KeyboardInterrupt):
            break
        if not message or message.lower() in EXIT_WORDS:
            break
        if choices is not None:
            message = choice_reply(message, choices)
        bus = EventBus()
        with progress_line(console, bus):
            response = await agent.engine.run_turn(
                agent.session, message, conversation_id=conversation_id, bus=bus
            )
        conversation_id = response.conversation_id
        print_blocks(console, response.blocks)
        choices = question(response.blocks)
        for block in response.blocks:
            if block["type"] == "proposal" and block.get("status", "pending") == "pending":
                await decide(agent, block)


def chat(
    user: UserOption,
    model: ModelOption = None,
    erp_url: ErpUrlOption = None,
    base_url: BaseUrlOption = None,
    model_setting: ModelSettingOption = None,
) -> None:
    """Chat with the agent as USER: live progress, tables, charts, proposals confirmed y/n;
    follow-ups refer to earlier answers, and a question with choices takes a number."""
    run_agent(user, model, converse, erp_url, base_url, model_setting)
