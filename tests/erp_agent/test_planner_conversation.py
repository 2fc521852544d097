"""Conversations with the offline planner through the real engine and store against the demo
ERP: follow-ups that edit the last query, clarifications that resume, names resolved from the
ERP's master data, arithmetic, and bad input. Figures are checked against the ERP's REST API
read independently (raw httpx, native doctypes and fields, docstatus)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from rest_truth import RestERP, cents, sums

from conftest import TEST_TODAY, DemoERP, raw
from erp_agent.calls.session import Session
from erp_agent.config import EngineSettings, Settings
from erp_agent.engine.response import TurnResponse
from erp_agent.evals.score import figure_present, plain
from erp_agent.gateway.signin import sign_in
from erp_agent.planner import OfflinePlanner
from erp_agent.planner.read_as import split
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
ADMIN = "admin@demo.local"


class Chat:
    """One conversation: each message continues the previous one's conversation id."""

    def __init__(self, runtime: Runtime, session: Session) -> None:
        self.runtime, self.session = runtime, session
        self.conversation: str | None = None

    async def say(self, message: str) -> TurnResponse:
        engine = self.runtime.engine(
            OfflinePlanner(self.runtime.catalog), EngineSettings(today=TEST_TODAY)
        )
        response = await engine.run_turn(self.session, message, conversation_id=self.conversation)
        self.conversation = response.conversation_id
        return response


async def chat_as(runtime: Runtime, user: str) -> Chat:
    """A new conversation signed in as ``user`` (password ``demo``)."""
    from erp_agent.gateway.signin import sign_in

    return Chat(
        runtime, await sign_in(runtime.connector, runtime.registry, runtime.policy, user, "demo")
    )


def text_of(response: TurnResponse) -> str:
    """The answer after its "Read as:" line."""
    return split(plain("\n".join(b["markdown"] for b in response.blocks if b["type"] == "text")))[1]


def block(response: TurnResponse, kind: str) -> dict[str, Any]:
    found = [b for b in response.blocks if b["type"] == kind]
    assert found, (kind, response.blocks)
    return found[0]


def query_args(response: TurnResponse) -> dict[str, Any]:
    calls = [c for c in response.tools_called if c["name"] == "metrics.query"]
    assert calls, response.tools_called
    return dict(calls[-1]["arguments"])


def tools(response: TurnResponse) -> list[str]:
    return [c["name"] for c in response.tools_called]


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    rt = await Runtime.create(Settings(erp_url=demo_erp.url), store=store)
    yield rt
    await rt.aclose()


def revenue_rows(rest: RestERP, year: int, docstatus: int | None = 1) -> list[dict[str, Any]]:
    """Revenue in the ERP's terms: Sales Invoice base_net_total (company currency), submitted,
    posted in the year; each row gets its company's currency."""
    filters: list[list[Any]] = [["posting_date", "between", [f"{year}-01-01", f"{year}-12-31"]]]
    filters.append(
        ["docstatus", "=", docstatus] if docstatus is not None else ["docstatus", "!=", 2]
    )
    currency = {
        c["name"]: c["default_currency"] for c in rest.rows("Company", ["default_currency"])
    }
    fields = ["posting_date", "company", "base_net_total", "branch", "customer"]
    rows = rest.rows("Sales Invoice", fields, filters)
    return [
        {**r, "currency": currency[r["company"]], "net_total": r["base_net_total"]} for r in rows
    ]


async def test_five_turn_conversation_question_follow_up_breakdown_chart_export(
    chat: Chat, rest: RestERP
) -> None:
    first = await chat.say("whats the revnue by month this yr")  # typos on purpose
    assert tools(first)[0] == "metrics.query"
    this_year = sums(
        revenue_rows(rest, 2026), lambda r: (r["posting_date"][:7], r["currency"]), "net_total"
    )
    assert figure_present(text_of(first), float(cents(this_year[("2026-03", "KES")])))

    second = await chat.say("and last year?")
    call = second.tools_called[0]
    assert call["name"] == "metrics.query"
    assert call["arguments"]["period"] == {"from": "2025-01-01", "to": "2025-12-31"}
    assert "month" in call["arguments"]["group_by"]  # the grouping carried over
    rows_2025 = revenue_rows(rest, 2025)
    totals = sums(rows_2025, lambda r: r["currency"], "net_total")
    for value in totals.values():
        assert figure_present(text_of(second), float(cents(value))), text_of(second)
    # A deliberately wrong reading (drafts counted too) gives figures the answer must not show.
    wrong = sums(revenue_rows(rest, 2025, docstatus=None), lambda r: r["currency"], "net_total")
    if wrong["KES"] != totals["KES"]:
        assert not figure_present(text_of(second), float(cents(wrong["KES"])))

    third = await chat.say("break that down by branch")
    args = third.tools_called[0]["arguments"]
    assert "branch" in args["group_by"]
    assert args["period"] == {"from": "2025-01-01", "to": "2025-12-31"}
    table = block(third, "table")
    by_branch = sums(rows_2025, lambda r: (r["branch"], r["currency"]), "net_total")
    cells = {(row[table["columns"].index("branch")], row[table["columns"].index("currency")]):
             row[table["columns"].index("revenue")] for row in table["rows"]}  # fmt: skip
    for key, value in by_branch.items():
        assert cents(cells[key]) == cents(value), key

    fourth = await chat.say("as a chart")
    chart = block(fourth, "chart")
    shown = dict(
        zip(
            chart["spec"]["data"]["labels"],
            chart["spec"]["data"]["datasets"][0]["data"],
            strict=False,
        )
    )
    assert cents(shown["Nairobi"]) in {cents(v) for k, v in by_branch.items() if k[0] == "Nairobi"}

    fifth = await chat.say("export that as Excel")
    assert tools(fifth) == ["results.export"]
    assert block(fifth, "file")["name"].endswith(".xlsx")

    why = await chat.say("how did you get that?")
    assert tools(why) == []
    assert "submitted Sales Invoices" in text_of(why)

    state = await chat.runtime.store.conversation_state(str(chat.conversation))
    assert state["last_query"]["tool"] == "metrics.query"
    assert [r["text"] for r in state["requests"]][-2:] == [
        "export that as Excel",
        "how did you get that?",
    ]


async def test_only_a_place_and_top_n_instead(chat: Chat, rest: RestERP) -> None:
    await chat.say("Revenue by customer this year")
    only = await chat.say("only Kisumu")
    flt = query_args(only)["filters"]
    assert {"dimension": "branch", "op": "=", "value": "Kisumu"} in flt
    top = await chat.say("top 3 instead")
    args = query_args(top)
    assert args["top"] == 3
    assert {"dimension": "branch", "op": "=", "value": "Kisumu"} in args["filters"]
    detail = [r for r in revenue_rows(rest, 2026) if r["branch"] == "Kisumu"]
    per_customer = sums(detail, lambda r: r["customer"], "net_total")
    best = max(per_customer, key=lambda c: per_customer[c])
    assert best in text_of(top)
    assert figure_present(text_of(top), float(cents(per_customer[best])))
    row = await chat.say("the second one")
    assert tools(row) == ["results.page"]
    second = sorted(per_customer, key=lambda c: -per_customer[c])[1]
    assert second in text_of(row)


async def test_item_and_warehouse_names_are_found_in_master_data(chat: Chat, rest: RestERP) -> None:
    [item] = rest.rows("Item", ["item_name"], [["item_name", "=", "Grey Hammer"]])
    [warehouse] = rest.rows(
        "Warehouse", ["warehouse_name"], [["warehouse_name", "like", "Nairobi Stores%"]]
    )
    bins = rest.rows(
        "Bin",
        ["actual_qty"],
        [["item_code", "=", item["name"]], ["warehouse", "=", warehouse["name"]]],
    )
    truth = sum(Decimal(str(b["actual_qty"])) for b in bins)
    answer = await chat.say("how many Grey Hammer do we have in Nairobi Stores")
    query = next(c for c in answer.tools_called if c["name"] == "metrics.query")
    assert query["arguments"]["metric"] == "stock_on_hand"
    assert {"dimension": "item", "op": "=", "value": item["name"]} in query["arguments"]["filters"]
    assert figure_present(text_of(answer), float(truth)), text_of(answer)


async def test_a_clarification_resumes_the_request(chat: Chat, rest: RestERP) -> None:
    # A new document belongs to one company: a user of several (with no default) is asked.
    companies = sorted(c["name"] for c in rest.rows("Company", []))
    assert len(companies) > 1
    item = rest.rows("Item", [], [["is_stock_item", "=", 1]])[0]["name"]
    # A customer with no quotations yet (one whose quotations are all one company's implies it).
    quoted = {r["party_name"] for r in rest.rows("Quotation", ["party_name"])}
    customer = next(c["name"] for c in rest.rows("Customer", []) if c["name"] not in quoted)
    asked = await chat.say(f"create a quotation for {customer} for 2 {item}")
    choices = block(asked, "choices")
    assert sorted(o["value"] for o in choices["options"]) == companies
    nothing = await chat.say("purple elephants")
    assert "doesn't match any of the options" in text_of(nothing)
    resumed = await chat.say("the second")
    made = next(c for c in resumed.tools_called if c["name"] == "quotation.create")
    assert made["arguments"]["company"] == choices["options"][1]["value"], made


async def test_owing_us_is_each_companys_receivables_and_a_name_picks_one(
    chat: Chat, rest: RestERP
) -> None:
    # "Owing us" is receivables: for a user of several companies the report runs for each
    # (nothing in the words picks one), and a company named in reply narrows it to that one.
    def owed(op: str) -> float:
        invoices = rest.rows(
            "Sales Invoice",
            ["outstanding_amount"],
            [["company", op, "Harbor Goods Inc"], ["docstatus", "=", 1],
             ["outstanding_amount", ">", 0]],
        )  # fmt: skip
        return float(sum(Decimal(str(i["outstanding_amount"])) for i in invoices))

    both = await chat.say("what are clients still owing us?")
    reports = [c for c in both.tools_called if c["name"] == "report.accounts_receivable"]
    assert sorted(c["arguments"]["company"] for c in reports) == sorted(
        c["name"] for c in rest.rows("Company", [])
    )
    assert figure_present(text_of(both), owed("="))
    assert figure_present(text_of(both), owed("!="))
    resumed = await chat.say("Harbor Goods")
    report = next(c for c in resumed.tools_called if c["name"] == "report.accounts_receivable")
    assert report["arguments"]["company"] == "Harbor Goods Inc"
    assert figure_present(text_of(resumed), owed("=")), text_of(resumed)
    # The Savanna company's figure is another number: the check tells the companies apart.
    assert not figure_present(text_of(resumed), owed("!="))


async def test_arithmetic_goes_to_the_calculator(chat: Chat) -> None:
    answer = await chat.say("what is 17.5% VAT on 1,234.56?")
    assert tools(answer) == ["calculator.evaluate"]
    assert "216.048" in text_of(answer)


@pytest.mark.parametrize(
    "message",
    ["", "   ", "x" * 10_000, "🙂🙂🙂", "¿cuántas facturas vencidas tenemos? 请 thanks",
     "and last year?", "export that as Excel", "the second one", "submit it", "why?"],
)  # fmt: skip
async def test_bad_input_gets_a_clear_answer(chat: Chat, message: str) -> None:
    answer = await chat.say(message)
    assert answer.outcome == "answered", answer.blocks
    words = text_of(answer)
    assert words.strip()
    assert "Traceback" not in words
    if message in ("and last year?", "export that as Excel", "the second one", "why?"):
        assert "no earlier" in words.lower(), words
    if message == "submit it":
        assert "no document in this conversation" in words


async def test_state_survives_in_the_store(runtime: Runtime) -> None:
    """Another engine (another worker) continues the conversation from the store alone."""
    rt = runtime
    session = await sign_in(rt.connector, rt.registry, rt.policy, ADMIN, "demo")
    first = await Chat(rt, session).say("How many open sales orders do we have?")
    other = Chat(rt, session)
    other.conversation = first.conversation_id
    why = await other.say("why?")
    assert "open" in text_of(why).lower() or "status" in text_of(why).lower()


async def test_a_write_by_names_resolves_party_and_items_and_asks_only_the_company(
    chat: Chat, rest: RestERP
) -> None:
    """A customer with no quotations yet: the company is the one thing asked."""
    [item] = rest.rows("Item", ["item_name"], [["item_name", "=", "Grey Hammer"]])
    quoted = {r["party_name"] for r in rest.rows("Quotation", ["party_name"])}
    customer = next(c for c in rest.rows("Customer", ["customer_name"]) if c["name"] not in quoted)
    before = len(rest.rows("Quotation", []))
    asked = await chat.say(f"raise a quotation for {customer['name']} for 3 x grey hammer")
    choices = block(asked, "choices")
    assert choices.get("slot") == "company"
    done = await chat.say("Savanna Trading Ltd")
    create = next(c for c in done.tools_called if c["name"] == "quotation.create")
    args = create["arguments"]
    assert args["party"] == customer["name"]  # the customer, never the company
    assert args["quotation_to"] == "customer"
    assert args["company"] == "Savanna Trading Ltd"
    assert args["items"] == [{"item": item["name"], "qty": 3.0}]
    assert block(done, "proposal")
    assert len(rest.rows("Quotation", [])) == before  # a proposal: nothing written yet


async def test_a_partys_documents_in_one_company_imply_it(chat: Chat, rest: RestERP) -> None:
    """Acme Ltd's quotations are all one company's: a new one is for that company, said in a
    note, not asked."""
    companies = {
        r["company"] for r in rest.rows("Quotation", ["company"], [["party_name", "=", "Acme Ltd"]])
    }
    assert len(companies) == 1
    done = await chat.say("raise a quotation for Acme Ltd for 3 x grey hammer")
    assert not [b for b in done.blocks if b["type"] == "choices"]
    create = next(c for c in done.tools_called if c["name"] == "quotation.create")
    assert create["arguments"]["company"] == next(iter(companies))
    assert "where Acme Ltd's quotations are" in "\n".join(
        b["markdown"] for b in done.blocks if b["type"] == "text"
    )


async def test_the_users_default_company_is_used_and_said(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    """A user of both companies whose ERP User Default is Savanna Trading Ltd is not asked which
    company: the quotation is for the default one, and the answer says so."""
    rt = runtime
    [(default,)] = raw(demo_erp, "select defvalue from tabDefaultValue where parent = ? and "
                       "defkey = 'company'", "sales@demo.local")  # fmt: skip
    sales = await sign_in(rt.connector, rt.registry, rt.policy, "sales@demo.local", "demo")
    admin = await sign_in(rt.connector, rt.registry, rt.policy, ADMIN, "demo")
    assert (sales.default_company, admin.default_company) == (default, None)
    done = await Chat(rt, sales).say("raise a quotation for Acme Ltd for 3 x grey hammer")
    create = next(c for c in done.tools_called if c["name"] == "quotation.create")
    assert create["arguments"]["company"] == default
    assert block(done, "proposal")
    assert f"{default}, your default company" in text_of(done)


async def test_two_conditions_are_both_kept(chat: Chat, rest: RestERP) -> None:
    """'owe more than 10k and more than 60 days overdue': per customer, overdue > 60 days only."""
    cutoff = "2026-10-01"  # TEST_TODAY - 60 days
    rows = rest.rows("Sales Invoice", ["customer", "currency", "outstanding_amount"],
                     [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["due_date", "<", cutoff]])  # fmt: skip
    owed = sums(rows, lambda r: (r["customer"], r["currency"]), "outstanding_amount")
    over = {k: v for k, v in owed.items() if v > 10_000}
    answer = await chat.say("Who owes us more than 10k and is more than 60 days overdue?")
    words = text_of(answer)
    listed = [line for line in words.splitlines() if line.startswith("- ")]
    assert len(listed) == len(over), words
    for (customer, _), value in over.items():
        assert customer in words
        assert figure_present(words, float(cents(value)))
    under = [k[0] for k, v in owed.items() if v <= 10_000 and k[0] not in {c for c, _ in over}]
    assert all(f"- {c}:" not in words for c in under)


async def test_the_sum_of_the_records_listed_is_what_they_still_owe(
    chat: Chat, rest: RestERP
) -> None:
    """'how much is that in total?' after a list of unpaid invoices: their outstanding summed,
    one figure per currency (not their grand totals, not the list again)."""
    chosen = [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["is_return", "=", 0],
              ["branch", "=", "Kisumu"]]  # fmt: skip
    rows = rest.rows("Sales Invoice", ["currency", "outstanding_amount", "grand_total"], chosen)
    owed = sums(rows, lambda r: r["currency"], "outstanding_amount")
    billed = sums(rows, lambda r: r["currency"], "grand_total")
    assert owed
    assert owed != billed  # partly paid invoices tell the two apart
    await chat.say("show me the unpaid sales invoices in Kisumu")
    answer = await chat.say("how much is that in total?")
    words = text_of(answer)
    for value in owed.values():
        assert figure_present(words, float(cents(value))), words
    assert not any(
        figure_present(words, float(cents(v))) for k, v in billed.items() if v != owed.get(k)
    ), words


def _warehouses(rest: RestERP) -> dict[str, str]:
    """City → warehouse id, for the "<city> Stores" warehouses of the demo data."""
    rows = rest.rows("Warehouse", ["warehouse_name"], [["warehouse_name", "like", "% Stores"]])
    return {r["warehouse_name"].removesuffix(" Stores"): r["name"] for r in rows}


def _bins(rest: RestERP, field: str, filters: list[list[Any]]) -> Decimal:
    return sum((Decimal(str(b[field])) for b in rest.rows("Bin", [field], filters)), Decimal())


async def test_a_misspelt_item_in_a_named_warehouse(chat: Chat, rest: RestERP) -> None:
    """A typo inside the item's name ('pakcing') and 'the <city> warehouse' (a warehouse, not
    the branch of the same name): the item's quantity in that warehouse."""
    tapes = rest.rows("Item", ["item_name"], [["item_name", "like", "% Packing Tape"]])
    item = sorted(tapes, key=lambda r: r["name"])[0]
    colour = item["item_name"].removesuffix(" Packing Tape").lower()
    city, warehouse = sorted(_warehouses(rest).items())[0]
    truth = _bins(
        rest, "actual_qty", [["item_code", "=", item["name"]], ["warehouse", "=", warehouse]]
    )
    answer = await chat.say(f"how many {colour} pakcing tape rolls are in the {city} warehouse")
    flt = query_args(answer)["filters"]
    assert {"dimension": "item", "op": "=", "value": item["name"]} in flt
    assert {"dimension": "warehouse", "op": "=", "value": warehouse} in flt
    assert figure_present(text_of(answer), float(truth)), text_of(answer)
    # The wrong reading (the item everywhere) gives a figure the answer must not show.
    everywhere = _bins(rest, "actual_qty", [["item_code", "=", item["name"]]])
    if everywhere != truth:
        assert not figure_present(text_of(answer), float(everywhere))


async def test_worth_is_the_stock_value_of_the_warehouse(chat: Chat, rest: RestERP) -> None:
    city, warehouse = sorted(_warehouses(rest).items())[-1]
    value = _bins(rest, "stock_value", [["warehouse", "=", warehouse]])
    qty = _bins(rest, "actual_qty", [["warehouse", "=", warehouse]])
    answer = await chat.say(f"what's all the stock at the {city} warehouse worth?")
    args = query_args(answer)
    assert args["metric"] == "stock_value"
    assert {"dimension": "warehouse", "op": "=", "value": warehouse} in args["filters"]
    assert figure_present(text_of(answer), float(cents(value))), text_of(answer)
    assert not figure_present(text_of(answer), float(qty))  # the quantity: the wrong reading


async def test_a_bare_place_after_a_warehouse_is_the_next_warehouse(
    chat: Chat, rest: RestERP
) -> None:
    [item] = rest.rows("Item", ["item_name"], [["item_name", "=", "Grey Hammer"]])
    places = sorted(_warehouses(rest).items())
    (first, _), (second, w2) = places[0], places[1]
    await chat.say(f"stock of grey hammer at {first.lower()} stores")
    then = await chat.say(f"how about {second}?")
    flt = query_args(then)["filters"]
    assert {"dimension": "warehouse", "op": "=", "value": w2} in flt
    assert {"dimension": "item", "op": "=", "value": item["name"]} in flt
    assert not any(f["dimension"] == "branch" for f in flt), flt
    truth = _bins(rest, "actual_qty", [["item_code", "=", item["name"]], ["warehouse", "=", w2]])
    assert figure_present(text_of(then), float(truth)), text_of(then)


async def test_a_ranking_the_figure_cannot_make_is_declined_in_words(chat: Chat) -> None:
    # Purchases are kept per bill, not per item line, and no figure of ours cuts them by item.
    answer = await chat.say("purchases by item last month")
    words = text_of(answer)
    assert "metrics.query" not in tools(answer)
    assert "can't break" in words, words
    assert "item" in words
    assert "supplier" in words  # what it can be broken down by instead
    assert not re.search(r"\d", words), words  # no figure of another question
    # Sales are: "which products sold best" is revenue cut by the invoices' item lines.
    sold = await chat.say("which products sold best last month?")
    assert query_args(sold)["group_by"] == ["item"]
    grouped = await chat.say("turnover by customer group last month")
    assert query_args(grouped)["group_by"] == ["customer_group"]


async def test_what_an_action_does_is_asked_of_the_knowledge_base(chat: Chat) -> None:
    answer = await chat.say("can we amend a submitted sales order and what does that change?")
    assert "knowledge.search" in tools(answer)
    assert not any(t.endswith(".list") for t in tools(answer)), tools(answer)


async def test_which_customers_they_are_for_groups_the_records_by_their_customer(
    chat: Chat, rest: RestERP
) -> None:
    """A follow-up naming what the records link to is those records per link, read with the
    tools the first turn was offered (not a list of every customer)."""
    first = await chat.say("How many open sales orders do we have?")
    second = await chat.say("which customers are they for?")
    assert tools(second) == ["metrics.query"]
    args = query_args(second)
    assert args == {**query_args(first), "group_by": ["customer"]}
    orders = rest.rows("Sales Order", ["customer", "status"], [["docstatus", "=", 1]])
    open_ = {r["customer"] for r in orders if r["status"] not in ("Completed", "Closed")}
    for customer in {r["customer"] for r in orders} - open_:
        assert customer not in text_of(second)


async def test_who_the_suppliers_on_them_are_is_the_orders_per_supplier(
    chat: Chat, rest: RestERP
) -> None:
    await chat.say("Which purchase orders are still open?")
    second = await chat.say("who are the suppliers on them?")
    assert "supplier.list" not in tools(second)
    [call] = [c for c in second.tools_called if c["name"] == "purchase_order.aggregate"]
    assert {"field": "supplier"} in call["arguments"]["group_by"]
    still = ["To Bill", "To Receive and Bill", "To Receive"]
    orders = rest.rows(
        "Purchase Order", ["supplier", "status"], [["docstatus", "=", 1], ["status", "in", still]]
    )
    assert orders
    for supplier in {r["supplier"] for r in orders}:
        assert supplier in text_of(second)
    others = rest.rows("Supplier", ["supplier_name"], [])
    for supplier in {r["supplier_name"] for r in others} - {r["supplier"] for r in orders}:
        assert supplier not in text_of(second)
