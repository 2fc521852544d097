"""`erp-agent scan FILE --as USER`: a supplier invoice or customer purchase order → a draft.

The file is read, its party and items are looked up in the ERP as USER, and the draft is shown
with every flagged field; it is written only if USER answers yes (or never, with --no-input).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from erp_agent.calls.outcome import ProposalView
from erp_agent.cli._agent import Agent, run_agent
from erp_agent.cli._common import console, err_console
from erp_agent.cli._render import proposal_view
from erp_agent.cli.ask import UserOption
from erp_agent.cli.chat import decide
from erp_agent.documents.draft import ScanResult, scan_to_draft
from erp_agent.results.blocks import proposal_block

KindOption = Annotated[
    str,
    typer.Option(
        "--kind",
        help="auto (from the title), purchase_invoice (a supplier's bill) or sales_order "
        "(a customer's purchase order).",
    ),
]


def _flags(result: ScanResult) -> Table | None:
    if not result.flags:
        return None
    table = Table("Check", "Field", "Why", title="Fields to check before confirming")
    for flag in result.flags:
        style = "red" if flag.level == "unmatched" else "yellow"
        table.add_row(f"[{style}]{flag.level}[/]", flag.field, flag.message)
    return table


async def choose_party(agent: Agent, result: ScanResult) -> ProposalView | None:
    """A party several records fit: a numbered prompt; the chosen one re-fills the draft."""
    block, proposal = result.choices, result.proposal
    if block is None or proposal is None:
        return proposal
    options = block["options"]
    console.print(f"[bold]{block['question']}[/]")
    for number, option in enumerate(options, start=1):
        console.print(f"  {number}. {option['label']}")
    while True:
        answer = (
            await asyncio.to_thread(console.input, f"Choose 1–{len(options)} (Enter keeps it): ")
        ).strip()
        if not answer:
            return proposal
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            break
        console.print(f"[yellow]Not one of the choices.[/] Type a number from 1 to {len(options)}.")
    edit = options[int(answer) - 1]["edit"]
    if edit["party"] == (result.matches.get("party") or {}).get("id"):
        return proposal
    edited = await agent.runtime.gateway.revise(
        agent.session, str(edit["proposal"]), {"party": edit["party"]}
    )
    if edited.proposal is None:
        console.print(f"[red]{edited.message}[/] The draft is unchanged.")
        return proposal
    console.print("[green]Changed and checked by the ERP: a new proposal.[/]")
    console.print(proposal_view(proposal_block(edited.proposal)))
    return edited.proposal


def scan(
    file: Annotated[Path, typer.Argument(help="The PDF or image (PNG, JPEG, TIFF, WebP).")],
    user: UserOption,
    kind: KindOption = "auto",
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the scan result as JSON; nothing is asked.")
    ] = False,
    no_input: Annotated[
        bool, typer.Option("--no-input", help="Show the draft and stop; nothing is written.")
    ] = False,
) -> None:
    """Scan FILE as USER into a draft Purchase Invoice or Sales Order, then confirm it."""
    if kind not in ("auto", "purchase_invoice", "sales_order"):
        err_console.print("[red]Error:[/] --kind is auto, purchase_invoice or sales_order.")
        raise typer.Exit(2)
    if not file.is_file():
        err_console.print(f"[red]Error:[/] {file} is not a file.")
        raise typer.Exit(2)
    data = file.read_bytes()

    async def work(agent: Agent) -> ScanResult:
        result = await scan_to_draft(agent.runtime.gateway, agent.session, data, file.name, kind)
        if json_output:
            return result
        style = "green" if result.ok else "red"
        console.print(f"[{style}]{result.message}[/]")
        table = _flags(result)
        if table is not None:
            console.print(table)
        if result.proposal is not None:
            console.print(proposal_view(proposal_block(result.proposal)))
            if not no_input:
                chosen = await choose_party(agent, result)
                if chosen is not None:
                    await decide(agent, proposal_block(chosen))
        return result

    result = run_agent(user, None, work)
    if json_output:
        typer.echo(json.dumps(result.as_dict(), default=str, ensure_ascii=False))
    if not result.ok:
        raise typer.Exit(1)
