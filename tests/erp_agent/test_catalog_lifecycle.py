"""The canonical lifecycle (draft -> booked -> cancelled) declared once in the catalog, and each
connector's native states mapped onto it: ERPNext's docstatus unchanged, Tryton's states many to
one with the intermediate state kept; entity maps with a discriminating domain; partial maps."""

from __future__ import annotations

import pytest

from erp_agent.catalog import load_catalog
from erp_agent.catalog.lifecycle import Lifecycle, LifecycleMap
from erp_agent.connectors.profile import catalog_for
from erp_agent.connectors.tryton.connector import TrytonConnector


def test_every_transaction_goes_draft_booked_cancelled() -> None:
    catalog = load_catalog()
    for entity in catalog.entities.values():
        if entity.kind == "transaction":
            assert entity.lifecycle is not None, entity.name
            assert {n: s.code for n, s in entity.lifecycle.states.items()} == {
                "draft": 0, "booked": 1, "cancelled": 2}  # fmt: skip
            assert entity.lifecycle.booked == 1
        else:
            assert entity.lifecycle is None, entity.name


def test_erpnext_maps_docstatus_onto_it_unchanged() -> None:
    catalog = load_catalog()
    for emap in catalog.maps("erpnext").entities.values():
        if catalog.entity(emap.entity).kind != "transaction":
            continue
        assert emap.lifecycle is not None
        life = catalog.entity(emap.entity).lifecycle
        assert life is not None
        assert [emap.lifecycle.canonical(life, d) for d in (0, 1, 2)] == [0, 1, 2]


def test_tryton_states_map_many_to_one() -> None:
    catalog = load_catalog()
    invoice = catalog.native("tryton", "sales_invoice")
    life = catalog.entity("sales_invoice").lifecycle
    assert invoice.lifecycle is not None
    assert life is not None
    assert invoice.domain == (["type", "=", "out"],)
    assert catalog.native("tryton", "purchase_invoice").domain == (["type", "=", "in"],)
    states = {s: invoice.lifecycle.canonical(life, s) for s in
              ("draft", "validated", "posted", "paid", "cancelled")}  # fmt: skip
    assert states == {"draft": 0, "validated": 0, "posted": 1, "paid": 1, "cancelled": 2}
    assert invoice.lifecycle.native(life, [1]) == ["posted", "paid"]
    assert invoice.lifecycle.buttons == {"submit": "post", "cancel": "cancel"}
    assert invoice.matches_id("US-INV-2026-00001")
    assert invoice.number_field == "number"


def test_a_lifecycle_map_that_does_not_fit_is_refused() -> None:
    life = Lifecycle.model_validate({"states": {
        "draft": {"code": 0, "label": "Draft"}, "booked": {"code": 1, "label": "Booked"},
        "cancelled": {"code": 2, "label": "Cancelled"}}})  # fmt: skip
    with pytest.raises(ValueError, match="maps to two canonical states"):
        LifecycleMap.model_validate({"field": "state", "states": {
            "draft": ["draft"], "booked": ["draft"], "cancelled": ["x"]}})  # fmt: skip
    partial = LifecycleMap(field="state", states={"draft": ("draft",), "booked": ("done",)})
    assert partial.problems(life) == ["lifecycle state 'cancelled' has no native state"]
    with pytest.raises(ValueError, match="share a code"):
        Lifecycle.model_validate({"states": {"a": {"code": 0, "label": "A"},
                                             "b": {"code": 0, "label": "B"}}, "counts": "a"})  # fmt: skip


def test_a_partial_map_offers_only_what_it_maps() -> None:
    catalog = load_catalog()
    tryton = TrytonConnector("http://127.0.0.1:9/erp")  # the profile needs no server
    served = catalog_for(catalog, tryton.profile, tryton.native_maps())
    invoice = served.entity("sales_invoice")
    assert "branch" not in invoice.fields
    assert "customer" in invoice.fields
    assert invoice.lifecycle is not None
    assert {"billed", "revenue", "invoice_count", "receivables"} <= set(served.metrics)
    assert "leave_application" not in served.entities
    assert tryton.database == "erp"
    assert tryton.base_url == "http://127.0.0.1:9"
