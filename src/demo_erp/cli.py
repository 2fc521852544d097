"""`erp-agent demo-erp …`: seed, serve and list the users of the bundled demo ERP."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from demo_erp import db, server
from demo_erp.context import Settings

app = typer.Typer(
    help="The bundled demo ERP: a Frappe-compatible system of record.", no_args_is_help=True
)
console = Console()

PathOption = Annotated[Path, typer.Option("--path", help="The demo ERP's SQLite file.")]
VersionOption = Annotated[
    int, typer.Option("--version", help="Imitate Frappe v15 or v16.", min=15, max=16)
]
TodayOption = Annotated[
    str | None, typer.Option("--today", help="Business date (YYYY-MM-DD); default: the real date.")
]


def _today(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise typer.BadParameter(f"--today must be YYYY-MM-DD, not {value!r}") from exc


@app.command()
def seed(
    path: PathOption = server.DEFAULT_DB,
    seed_value: Annotated[
        int, typer.Option("--seed", help="Random seed: same seed, same data.")
    ] = 42,
    scale: Annotated[
        float, typer.Option("--scale", help="Multiply transaction volumes.", min=0.01)
    ] = 1.0,
    invoices: Annotated[
        int | None,
        typer.Option("--invoices", help="Add this many bulk sales invoices (benchmarks)."),
    ] = None,
    password: Annotated[
        str, typer.Option("--password", help="Password of every demo user.")
    ] = "demo",
    today: TodayOption = None,
) -> None:
    """Create the demo data set (replaces the file at --path)."""
    from demo_erp.seed import seed as run_seed

    path.parent.mkdir(parents=True, exist_ok=True)
    with console.status("Seeding the demo ERP…") as status:
        summary = run_seed(
            path,
            seed=seed_value,
            today=_today(today),
            password=password,
            invoices=invoices,
            scale=scale,
            progress=lambda step: status.update(f"Seeding: {step}"),
        )
    table = Table("DocType", "Records", title=f"Seeded {path} in {summary.seconds:.1f} s")
    for doctype, count in sorted(summary.counts.items()):
        table.add_row(doctype, f"{count:,}")
    console.print(table)


@app.command()
def serve(
    path: PathOption = server.DEFAULT_DB,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    version: VersionOption = 15,
    today: TodayOption = None,
) -> None:
    """Serve the demo ERP over HTTP (seeds it first if the file does not exist)."""
    if not path.exists():
        console.print(f"[yellow]{path} does not exist: seeding it first.[/]")
        seed(path=path, seed_value=42, scale=1.0, invoices=None, password="demo", today=today)
    console.print(
        f"Demo ERP (Frappe v{version} API) on [bold]http://{host}:{port}[/] — data: {path}"
    )
    server.serve(Settings(db_path=str(path), version=version, today=_today(today)), host, port)


@app.command()
def users(
    path: PathOption = server.DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The demo users, their roles, restrictions and API keys."""
    from demo_erp import auth
    from demo_erp.seed import DEMO_USERS

    if not path.exists():
        raise typer.BadParameter(f"{path} does not exist; run `erp-agent demo-erp seed` first.")
    conn = db.connect(path)
    rows: list[dict[str, Any]] = []
    for user in DEMO_USERS:
        key_row = conn.execute(
            'select api_key from "tabUser" where name = ?', (user.email,)
        ).fetchone()
        rows.append(
            {
                "email": user.email,
                "roles": list(user.roles),
                "restriction": user.description,
                "api_key": key_row["api_key"] if key_row else None,
                "api_secret": auth.api_secret(conn, user.email),
            }
        )
    conn.close()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("User", "Roles", "Restricted to", "API key", "API secret", title="Demo users")
    for row in rows:
        table.add_row(
            row["email"],
            ", ".join(row["roles"]),
            row["restriction"],
            row["api_key"] or "",
            row["api_secret"] or "",
        )
    console.print(table)


@app.command("oauth-client")
def oauth_client(
    redirect_uri: Annotated[
        list[str],
        typer.Option(
            "--redirect-uri",
            help="Callback URL(s), e.g. http://127.0.0.1:8080/api/auth/sso/callback.",
        ),
    ],
    path: PathOption = server.DEFAULT_DB,
    skip_authorization: Annotated[
        bool, typer.Option("--skip-authorization", help="No Confirm Access page (a trusted app).")
    ] = False,
    client_id: Annotated[str | None, typer.Option("--client-id", help="Keep this id.")] = None,
) -> None:
    """Register an OAuth Client (as ERPNext's desk form does) and print its id and secret."""
    from demo_erp import oauth

    if not path.exists():
        raise typer.BadParameter(f"{path} does not exist; run `erp-agent demo-erp seed` first.")
    conn = db.connect(path)
    try:
        client = oauth.register_client(
            conn, redirect_uri, skip_authorization=skip_authorization, client_id=client_id
        )
    finally:
        conn.close()
    typer.echo(f"ERP_AGENT_OAUTH_CLIENT_ID={client.client_id}")
    typer.echo(f"ERP_AGENT_OAUTH_CLIENT_SECRET={client.client_secret}")
