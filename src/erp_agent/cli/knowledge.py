"""`erp-agent knowledge …`: index and search the knowledge base.

Register with ``app.add_typer(knowledge.app, name="knowledge")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from erp_agent.cli._common import console, err_console
from erp_agent.config import load_settings
from erp_agent.errors import ErpAgentError
from erp_agent.retrieval.knowledge import KnowledgeBase, packaged_root
from erp_agent.retrieval.settings import make_retriever

app = typer.Typer(help="The knowledge base: index Markdown documents, search passages.")


@app.command("index")
def index(
    path: Annotated[
        Path | None,
        typer.Argument(help="A Markdown file or folder (default: the starter knowledge base)."),
    ] = None,
    no_prune: Annotated[
        bool, typer.Option("--no-prune", help="Keep documents no longer under PATH.")
    ] = False,
) -> None:
    """Index knowledge documents; unchanged files are skipped (no embeddings)."""
    settings = load_settings()
    root = path or packaged_root()
    if not root.exists():
        err_console.print(f"[red]Error:[/] {root} does not exist.")
        raise typer.Exit(1)
    try:
        retriever = make_retriever(settings)
    except ErpAgentError as exc:
        err_console.print(f"[red]Error:[/] {exc}")
        raise typer.Exit(1) from exc
    kb = KnowledgeBase(retriever, settings.retrieval.index_tenant)
    total = 1 if root.is_file() else len(list(root.rglob("*.md")))
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("indexing", total=total)

            def step(doc_id: str, chunks: int, _: int) -> None:
                bar.update(task, advance=1, description=f"{doc_id} ({chunks} chunks)")

            report = kb.index_path(root, prune=not no_prune, progress=step)
            bar.update(task, completed=total, description="done")
    finally:
        retriever.index.close()
    console.print(
        f"{len(report.indexed)} indexed ({report.chunks} chunks), {len(report.unchanged)} "
        f"unchanged, {len(report.removed)} removed."
    )


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="The question.")],
    module: Annotated[str | None, typer.Option(help="Only this module.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=20)] = 5,
) -> None:
    """Show the passages knowledge.search would return."""
    settings = load_settings()
    retriever = make_retriever(settings)
    try:
        passages = KnowledgeBase(retriever, settings.retrieval.index_tenant).search(
            query, module=module, limit=limit
        )
    finally:
        retriever.index.close()
    for p in passages:
        console.print(f"[bold]{p.label}[/] [dim]{p.score:.4f}[/]\n{p.text}\n")
    if not passages:
        console.print("No passage matches. Run `erp-agent knowledge index` first?")
