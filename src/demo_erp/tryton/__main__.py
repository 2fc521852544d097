"""``python -m demo_erp.tryton build|serve|seed-into …``: the Tryton demo's own commands."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo_erp.tryton")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="create and seed a Tryton database in a folder")
    build.add_argument("folder", type=Path)
    build.add_argument("--seed", type=int, default=7)
    build.add_argument("--today", type=dt.date.fromisoformat, default=None)
    serve = sub.add_parser("serve", help="serve a built folder")
    serve.add_argument("folder", type=Path)
    serve.add_argument("--port", type=int, default=0)
    into = sub.add_parser("seed-into", help="(internal) seed an activated database")
    into.add_argument("config_file")
    into.add_argument("database")
    into.add_argument("--seed", type=int, default=7)
    into.add_argument("--today", type=dt.date.fromisoformat, required=True)
    into.add_argument("--summary", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "seed-into":
        from demo_erp.tryton.seed import seed

        made = seed(args.database, args.config_file, seed=args.seed, today=args.today)
        args.summary.write_text(json.dumps(made, default=str), encoding="utf-8")
        return 0
    from demo_erp.tryton.instance import Server
    from demo_erp.tryton.instance import build as build_db

    if args.command == "build":
        built = build_db(args.folder, seed=args.seed, today=args.today)
        print(json.dumps({"timings": built.timings, "summary": built.summary}, default=str))
        return 0
    server = Server(args.folder, args.port or None)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops trytond too, as Ctrl-C does

    signal.signal(signal.SIGTERM, stop)
    try:
        server.wait()
        print(f"Tryton serving database 'erp' on {server.url}", flush=True)
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
