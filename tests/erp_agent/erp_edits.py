"""Edits made in the ERP directly, by another user (not through the agent): the "someone
edited it in between" side of version and recovery tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from conftest import TEST_TODAY, DemoERP, raw


@contextmanager
def someone_else(demo: DemoERP) -> Iterator[httpx.Client]:
    """Another ERP user, editing records directly in the ERP (not through the agent)."""
    with httpx.Client(base_url=demo.url, timeout=10) as client:
        reply = client.post("/api/method/login", json={"usr": "admin@demo.local", "pwd": "demo"})
        assert reply.status_code == 200, reply.text
        yield client


_STANDARD = {"name", "owner", "creation", "modified", "modified_by", "docstatus", "idx"}
_CHILD_STANDARD = _STANDARD | {"parent", "parenttype", "parentfield", "doctype"}


def draft_invoice(demo: DemoERP) -> Any:
    """A new draft Sales Invoice (a copy of a submitted one), made in the ERP directly."""
    with someone_else(demo) as other:
        submitted = raw(
            demo,
            "select name from `tabSales Invoice` where docstatus = 1 and is_return = 0 "
            "order by posting_date desc limit 1",
        )[0]["name"]
        doc = other.get(f"/api/resource/Sales Invoice/{submitted}").json()["data"]
        skip = _STANDARD | {"status", "outstanding_amount", "paid_amount", "amended_from"}
        body = {k: v for k, v in doc.items() if k not in skip and not isinstance(v, list)}
        body.update(posting_date=TEST_TODAY.isoformat(), due_date="2026-12-30")
        body["items"] = [
            {k: v for k, v in row.items() if k not in _CHILD_STANDARD} for row in doc["items"]
        ]
        created = other.post("/api/resource/Sales Invoice", json=body)
        assert created.status_code == 200, created.text
        name = created.json()["data"]["name"]
    return raw(
        demo,
        "select name, grand_total, modified from `tabSales Invoice` where name = ?",
        name,
    )[0]
