""" "How many leave days does Grace have left": the leave balance (ERPNext's Employee Leave
Balance report, as the HR user), not a count of employees or the leave already taken. Truth is
that report run over the demo ERP's REST API."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_truth import RestERP
from test_planner_conversation import Chat, query_args, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio
USER = "hr@demo.local"


@pytest.mark.parametrize(
    "said",
    ["how many leave days does {name} have left?", "how much leave has {name} got remaining"],
)  # fmt: skip
async def test_leave_left_is_the_balance_of_the_erps_report(
    chat: Chat, rest: RestERP, said: str
) -> None:
    employees = rest.rows(
        "Employee", ["name", "employee_name", "company"], [["status", "=", "Active"]]
    )
    first_names = [e["employee_name"].split()[0] for e in employees]
    person = next(
        e for e, f in zip(employees, first_names, strict=True) if first_names.count(f) == 1
    )
    report = rest.report(
        "Employee Leave Balance",
        {"company": person["company"], "from_date": f"{TEST_TODAY.year}-01-01",
         "to_date": f"{TEST_TODAY.year}-12-31", "employee": person["name"]},
    )  # fmt: skip
    rows = [
        r for r in report["result"] if isinstance(r, dict) and r.get("employee") == person["name"]
    ]
    left = sum((Decimal(str(r["closing_balance"])) for r in rows), Decimal(0))
    taken = sum((Decimal(str(r["leaves_taken"])) for r in rows), Decimal(0))
    assert rows
    assert left != taken
    response = await chat.say(said.format(name=person["employee_name"].split()[0]))
    args = query_args(response)
    assert args["metric"] == "leave_balance", said
    assert {"dimension": "employee", "op": "=", "value": person["name"]} in args["filters"]
    answer = text_of(response)
    assert figure_present(answer, float(left)), answer
