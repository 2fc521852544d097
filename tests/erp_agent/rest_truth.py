"""The independent side of metric checks: rows read straight from the ERP's REST API with raw
httpx as the user, in the ERP's own terms (doctype, native fields, docstatus), added up here."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import httpx


class RestERP:
    """A signed-in REST session (cookie login, as a browser would)."""

    def __init__(self, url: str, user: str, password: str = "demo") -> None:
        self.client = httpx.Client(base_url=url, timeout=60)
        reply = self.client.post("/api/method/login", data={"usr": user, "pwd": password})
        reply.raise_for_status()

    def close(self) -> None:
        self.client.close()

    def rows(
        self, doctype: str, fields: Iterable[str], filters: list[list[Any]] | None = None
    ) -> list[dict[str, Any]]:
        reply = self.client.get(
            f"/api/resource/{doctype}",
            params={
                "fields": json.dumps(["name", *fields]),
                "filters": json.dumps(filters or []),
                "limit_page_length": 0,
            },
        )
        reply.raise_for_status()
        return list(reply.json()["data"])

    def report(self, name: str, filters: dict[str, Any]) -> dict[str, Any]:
        reply = self.client.post(
            "/api/method/frappe.desk.query_report.run",
            # Stock Balance is a prepared report: run it now rather than queue it.
            data={
                "report_name": name,
                "filters": json.dumps(filters),
                "ignore_prepared_report": 1,
            },
        )
        reply.raise_for_status()
        return dict(reply.json()["message"])


def sums(
    rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], Any], value: str
) -> dict[Any, Decimal]:
    """Σ ``value`` per ``key(row)``, exactly."""
    out: dict[Any, Decimal] = defaultdict(Decimal)
    for row in rows:
        out[key(row)] += Decimal(str(row.get(value) or 0))
    return dict(out)


def cents(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"))
