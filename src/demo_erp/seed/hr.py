"""Departments, employees, leave, attendance, payroll and expense claims."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from demo_erp.seed import names
from demo_erp.seed.base import CompanyInfo, Seeder, add_months, month_end, workdays
from demo_erp.seed.overheads import pay_factor, payroll_months
from demo_erp.seed.users import DEMO_EMPLOYEE_USER, DEMO_USERS, add_user_permission

DEPARTMENTS = ("Management", "Sales", "Accounts", "Purchasing", "Warehouse", "Human Resources")
# designation -> (department, annual cost to company in USD at US pay levels)
DESIGNATIONS = {
    "Managing Director": ("Management", 180_000),
    "Branch Manager": ("Management", 95_000),
    "Sales Manager": ("Sales", 80_000),
    "Sales Executive": ("Sales", 52_000),
    "Customer Service Officer": ("Sales", 38_000),
    "Accounts Manager": ("Accounts", 85_000),
    "Accountant": ("Accounts", 60_000),
    "Purchase Manager": ("Purchasing", 78_000),
    "Purchase Officer": ("Purchasing", 50_000),
    "Storekeeper": ("Warehouse", 40_000),
    "Driver": ("Warehouse", 34_000),
    "HR Manager": ("Human Resources", 80_000),
}
# Kenyan pay relative to US pay, before converting to KES.
KE_PAY_FACTOR = 0.16
LEAVE_TYPES = (
    ("Annual Leave", 21, 0),
    ("Sick Leave", 10, 0),
    ("Casual Leave", 7, 0),
    ("Compassionate Leave", 5, 0),
    ("Leave Without Pay", 30, 1),
)
# Staff that are also demo users: (user, branch, designation).
USER_EMPLOYEES = (
    ("accounts.manager@demo.local", "Nairobi", "Accounts Manager", "Female"),
    ("accounts@demo.local", "Nairobi", "Accountant", "Male"),
    ("sales@demo.local", "Nairobi", "Sales Executive", "Female"),
    ("purchase@demo.local", "Nairobi", "Purchase Officer", "Male"),
    ("purchase.manager@demo.local", "Nairobi", "Purchase Manager", "Female"),
    ("stock@demo.local", "Nairobi", "Storekeeper", "Male"),
    ("hr@demo.local", "Nairobi", "HR Manager", "Female"),
    ("employee@demo.local", "Nairobi", "Customer Service Officer", "Male"),
    ("kisumu.manager@demo.local", "Kisumu", "Branch Manager", "Male"),
    ("mombasa.manager@demo.local", "Mombasa", "Branch Manager", "Male"),
)
STAFF_MIX = (
    ("Sales Executive", 5),
    ("Customer Service Officer", 2),
    ("Storekeeper", 2),
    ("Driver", 2),
    ("Accountant", 1),
    ("Purchase Officer", 1),
)


@dataclass
class EmployeeInfo:
    name: str
    full_name: str
    company: str
    branch: str
    joined: dt.date
    left: dt.date | None
    monthly: float
    designation: str

    def active(self, first: dt.date, last: dt.date) -> bool:
        return self.joined <= last and (self.left is None or self.left >= first)


def masters(s: Seeder) -> None:
    for designation in DESIGNATIONS:
        s.insert("Designation", {"designation_name": designation})
    for leave_type, days, lwp in LEAVE_TYPES:
        s.insert(
            "Leave Type", {"leave_type_name": leave_type, "max_leaves_allowed": days, "is_lwp": lwp}
        )
    for company in s.companies.values():
        for department in DEPARTMENTS:
            s.insert("Department", {"department_name": department, "company": company.name})


def _person(s: Seeder, kenyan: bool) -> tuple[str, str, str]:
    first, gender = s.pick(names.FIRST_NAMES_KE if kenyan else names.FIRST_NAMES_US)
    last = s.pick(names.LAST_NAMES_KE if kenyan else names.LAST_NAMES_US)
    return first, last, gender


def employees(s: Seeder) -> None:
    users = {u.email: u for u in DEMO_USERS}
    genders = {user: gender for user, _, _, gender in USER_EMPLOYEES}
    plan: list[tuple[str, str, str | None]] = []  # (branch, designation, user)
    for company in s.companies.values():
        plan.append((company.branches[0], "Managing Director", None))
    plan.extend((branch, designation, user) for user, branch, designation, _ in USER_EMPLOYEES)
    # The Managing Director runs the head office (first branch); other branches have a manager.
    managed = {branch for branch, designation, _ in plan if designation == "Branch Manager"}
    managed |= {company.branches[0] for company in s.companies.values()}
    for branch_name in s.branches:
        if branch_name not in managed:
            plan.append((branch_name, "Branch Manager", None))
    for company in s.companies.values():
        plan.append((company.branches[0], "Sales Manager", None))
    target = s.n(60, minimum=len(plan) + 4)
    branches = list(s.branches.values())
    staff = [d for d, _ in STAFF_MIX]
    staff_weights = [w for _, w in STAFF_MIX]
    while len(plan) < target:
        # Most staff work for the Kenyan company, which makes most of the sales.
        pick = s.weighted(
            branches, [b.weight * (3 if b.company.startswith("Savanna") else 0.8) for b in branches]
        )
        plan.append((pick.name, s.weighted(staff, staff_weights), None))
    out: list[EmployeeInfo] = []
    heads: dict[str, str] = {}  # branch or company -> employee who others report to
    for index, (branch_name, designation, user) in enumerate(plan):
        branch = s.branches[branch_name]
        company = s.companies[branch.company]
        kenyan = company.currency == "KES"
        if user is not None:
            full = users[user].full_name
            first, _, last = full.partition(" ")
            gender = genders[user]
        else:
            first, last, gender = _person(s, kenyan)
        senior = designation in ("Managing Director", "Branch Manager") or user is not None
        if senior or s.rng.random() < 0.8:
            joined = s.start - dt.timedelta(days=s.rng.randint(60, 3000))
        else:
            joined = s.start + dt.timedelta(days=s.rng.randint(0, (s.today - s.start).days - 30))
        left = None
        if not senior and index % 17 == 5:
            left = min(
                s.today - dt.timedelta(days=20), joined + dt.timedelta(days=s.rng.randint(200, 600))
            )
        department, usd = DESIGNATIONS[designation]
        annual = usd * s.rng.uniform(0.9, 1.15) * (KE_PAY_FACTOR * company.fx if kenyan else 1.0)
        annual = round(annual, -3)
        reports_to = heads.get(branch_name) or heads.get(company.name)
        doc = s.insert(
            "Employee",
            {
                "first_name": first,
                "last_name": last,
                "employee_name": f"{first} {last}",
                "company": company.name,
                "status": "Left" if left else "Active",
                "gender": gender,
                "date_of_birth": dt.date(
                    s.rng.randint(1965, 2001), s.rng.randint(1, 12), s.rng.randint(1, 28)
                ),
                "date_of_joining": joined,
                "relieving_date": left,
                "user_id": user,
                "department": company.acc(department),
                "designation": designation,
                "branch": branch_name,
                "reports_to": reports_to,
                "leave_approver": "hr@demo.local" if kenyan else None,
                "cell_number": f"+254 7{s.rng.randint(10, 99)} {s.rng.randint(100000, 999999)}"
                if kenyan
                else f"+1 {s.rng.randint(201, 989)} {s.rng.randint(1000000, 9999999)}",
                "company_email": f"{first.lower()}.{last.lower()}@{company.abbr.lower()}.example",
                "ctc": annual,
                "salary_currency": company.currency,
            },
            on=min(joined, s.start),
        )
        if designation == "Managing Director":
            heads[company.name] = doc["name"]
        elif designation == "Branch Manager":
            heads[branch_name] = doc["name"]
        if user == DEMO_EMPLOYEE_USER:
            add_user_permission(s, user, "Employee", doc["name"])
            s.data["demo_employee"] = doc["name"]
        out.append(
            EmployeeInfo(
                doc["name"],
                f"{first} {last}",
                company.name,
                branch_name,
                joined,
                left,
                round(annual / 12, 2),
                designation,
            )
        )
    s.data["employees"] = out


def _deductions(company: CompanyInfo, gross: float) -> list[tuple[str, str, float]]:
    if company.currency == "KES":
        return [
            ("PAYE", "PAYE", round(gross * 0.22, 2)),
            ("SHIF", "SHIF", round(gross * 0.0275, 2)),
            ("NSSF", "NSSF", 2160.0),
        ]
    return [
        ("Federal Income Tax", "FIT", round(gross * 0.12, 2)),
        ("Social Security", "SS", round(gross * 0.062, 2)),
        ("Medicare", "MED", round(gross * 0.0145, 2)),
    ]


def payroll(s: Seeder) -> None:
    """Monthly salary slips for the last 12 complete months, then the bank transfer."""
    months = payroll_months(s)
    _calibrate_pay(s, months)
    for first in months:
        last = month_end(first)
        working = len(workdays(first, last))
        net_pay: dict[str, list[tuple[str, float]]] = {}
        for emp in s.data["employees"]:
            if not emp.active(first, last):
                continue
            company = s.companies[emp.company]
            payment_days = working - (1 if s.rng.random() < 0.05 else 0)
            gross = round(emp.monthly * payment_days / working, 2)
            earnings = [
                ("Basic Salary", "B", round(gross * 0.6, 2)),
                ("House Allowance", "HA", round(gross * 0.25, 2)),
            ]
            earnings.append(
                ("Transport Allowance", "TA", round(gross - sum(e[2] for e in earnings), 2))
            )
            deductions = _deductions(company, gross)
            s.insert(
                "Salary Slip",
                {
                    "employee": emp.name,
                    "employee_name": emp.full_name,
                    "posting_date": last,
                    "start_date": first,
                    "end_date": last,
                    "company": company.name,
                    "currency": company.currency,
                    "payroll_frequency": "Monthly",
                    "total_working_days": working,
                    "payment_days": payment_days,
                    "earnings": [
                        {"salary_component": c, "abbr": a, "amount": v} for c, a, v in earnings
                    ],
                    "deductions": [
                        {"salary_component": c, "abbr": a, "amount": v} for c, a, v in deductions
                    ],
                    "branch": emp.branch,
                    "docstatus": 1,
                },
                on=last,
            )
            net = round(gross - sum(d[2] for d in deductions), 2)
            net_pay.setdefault(company.name, []).append((emp.name, net))
        _pay_salaries(s, last, net_pay)


def _calibrate_pay(s: Seeder, months: list[dt.date]) -> None:
    """Scale each company's pay to its size (payroll a believable share of its sales) and keep
    every employee's CTC equal to what the slips pay."""
    for company in s.companies.values():
        staff = [e for e in s.data["employees"] if e.company == company.name]
        planned = {m: sum(e.monthly for e in staff if e.active(m, month_end(m))) for m in months}
        factor = pay_factor(s, company, planned)
        for emp in staff:
            annual = round(emp.monthly * 12 * factor, -2)
            emp.monthly = round(annual / 12, 2)
            s.set_values("Employee", emp.name, {"ctc": annual})


def _pay_salaries(s: Seeder, last: dt.date, net_pay: dict[str, list[tuple[str, float]]]) -> None:
    """One bank transfer per company clears each employee's Payroll Payable balance."""
    for company_name, rows in net_pay.items():
        company = s.companies[company_name]
        total = round(sum(net for _, net in rows), 2)
        s.insert(
            "Journal Entry",
            {
                "title": f"Salaries paid {last:%b %Y}",
                "voucher_type": "Bank Entry",
                "posting_date": last,
                "company": company.name,
                "user_remark": f"Net salaries for {last:%B %Y}",
                "branch": company.branches[0],
                "cheque_no": f"PAY-{last:%Y%m}",
                "cheque_date": last,
                "docstatus": 1,
                "accounts": [
                    *(
                        {
                            "account": company.acc("Payroll Payable"),
                            "party_type": "Employee",
                            "party": employee,
                            "debit": net,
                            "debit_in_account_currency": net,
                        }
                        for employee, net in rows
                    ),
                    {
                        "account": company.acc("Bank"),
                        "credit": total,
                        "credit_in_account_currency": total,
                    },
                ],
            },
            on=last,
        )


def leave_and_attendance(s: Seeder) -> None:
    leave_types = (
        "Annual Leave",
        "Sick Leave",
        "Casual Leave",
        "Compassionate Leave",
        "Leave Without Pay",
    )
    approved: dict[str, list[tuple[dt.date, dt.date, str]]] = {}
    year_ago = max(s.start, s.today - dt.timedelta(days=365))
    for emp in s.data["employees"]:
        demo = emp.name == s.data.get("demo_employee")
        count = 4 if demo else s.rng.randint(0, 4)
        months = sorted(s.rng.sample(range(13), count))
        for offset in months:
            start = add_months(year_ago, offset) + s.days(0, 20)
            if not emp.active(start, start) or start > s.today + dt.timedelta(days=30):
                continue
            if start.weekday() >= 5:
                start += dt.timedelta(days=7 - start.weekday())
            length = s.weighted((1, 2, 3, 5, 10), (4, 3, 2, 2, 1))
            end = start + dt.timedelta(days=length - 1)
            leave_type = s.weighted(leave_types, (6, 3, 3, 1, 1))
            posted = start - s.days(3, 20)
            if start > s.today - dt.timedelta(days=5) or (demo and offset == months[-1]):
                status, docstatus = "Open", 0
            else:
                status = s.weighted(("Approved", "Rejected"), (85, 15))
                docstatus = 1
            s.insert(
                "Leave Application",
                {
                    "employee": emp.name,
                    "employee_name": emp.full_name,
                    "leave_type": leave_type,
                    "from_date": start,
                    "to_date": end,
                    "total_leave_days": len(workdays(start, end)),
                    "description": f"{leave_type} request",
                    "leave_approver": "hr@demo.local",
                    "status": status,
                    "posting_date": min(posted, s.today),
                    "company": emp.company,
                    "branch": emp.branch,
                    "docstatus": docstatus,
                },
                on=min(posted, s.today),
            )
            if status == "Approved":
                approved.setdefault(emp.name, []).append((start, end, leave_type))
    first = s.today - dt.timedelta(days=29)
    for day in workdays(first, s.today):
        for emp in s.data["employees"]:
            if not emp.active(day, day) or emp.joined > day:
                continue
            leave = next((t for a, b, t in approved.get(emp.name, []) if a <= day <= b), None)
            status = (
                "On Leave"
                if leave
                else s.weighted(("Present", "Work From Home", "Absent", "Half Day"), (90, 4, 3, 3))
            )
            s.insert(
                "Attendance",
                {
                    "employee": emp.name,
                    "employee_name": emp.full_name,
                    "attendance_date": day,
                    "status": status,
                    "leave_type": leave,
                    "company": emp.company,
                    "branch": emp.branch,
                    "docstatus": 1,
                },
                on=day,
            )


def leave_allocations(s: Seeder) -> None:
    """Each leave year's allowance of every leave type that is not unpaid, for every employee
    employed in that calendar year (the leave period), as a Leave Policy Assignment would
    allocate it. Deterministic: no random draws, so the rest of the data does not move."""
    allowances = [(name, days) for name, days, lwp in LEAVE_TYPES if not lwp]
    for emp in s.data["employees"]:
        for year in range(s.start.year, s.today.year + 1):
            first, last = dt.date(year, 1, 1), dt.date(year, 12, 31)
            if not emp.active(first, last):
                continue
            start = max(first, emp.joined)
            for leave_type, days in allowances:
                s.insert(
                    "Leave Allocation",
                    {
                        "employee": emp.name,
                        "employee_name": emp.full_name,
                        "leave_type": leave_type,
                        "from_date": start,
                        "to_date": last,
                        "new_leaves_allocated": days,
                        "description": f"{leave_type} for {year}",
                        "company": emp.company,
                        "docstatus": 1,
                    },
                    on=start,
                )


def expense_claims(s: Seeder) -> None:
    staff = [e for e in s.data["employees"] if e.left is None]
    year_ago = max(s.start, s.today - dt.timedelta(days=365))
    span = (s.today - year_ago).days
    claims = []
    for _ in range(s.n(90, minimum=4)):
        claims.append((year_ago + dt.timedelta(days=s.rng.randint(0, span)), s.pick(staff)))
    claims.sort(key=lambda c: (c[0], c[1].name))
    for day, emp in claims:
        company = s.companies[emp.company]
        rows = []
        for _ in range(s.rng.randint(1, 3)):
            amount = round(s.rng.uniform(15, 220) * company.fx, 2)
            rows.append(
                {
                    "expense_date": day - s.days(0, 6),
                    "expense_type": s.pick(names.EXPENSE_TYPES),
                    "description": "Client visit" if s.rng.random() < 0.5 else "Branch errand",
                    "amount": amount,
                }
            )
        if (s.today - day).days <= 14:
            approval, docstatus = "Draft", 0
        else:
            approval, docstatus = s.weighted(("Approved", "Rejected"), (85, 15)), 1
        for row in rows:
            row["sanctioned_amount"] = row["amount"] if approval == "Approved" else 0.0
        claim = s.insert(
            "Expense Claim",
            {
                "employee": emp.name,
                "employee_name": emp.full_name,
                "posting_date": day,
                "company": emp.company,
                "expense_approver": "hr@demo.local",
                "expenses": rows,
                "approval_status": approval,
                "branch": emp.branch,
                "docstatus": docstatus,
            },
            on=day,
        )
        age = (s.today - day).days
        if approval == "Approved" and age > 10 and s.rng.random() < 0.85:
            _reimburse(s, claim, company, emp, min(s.today, day + s.days(3, 20)))


def _reimburse(
    s: Seeder, claim: dict[str, Any], company: CompanyInfo, emp: EmployeeInfo, day: dt.date
) -> None:
    amount = sum(float(r["sanctioned_amount"]) for r in claim["expenses"])
    s.insert(
        "Payment Entry",
        {
            "payment_type": "Pay",
            "posting_date": day,
            "company": company.name,
            "mode_of_payment": "M-Pesa" if company.currency == "KES" else "Wire Transfer",
            "party_type": "Employee",
            "party": emp.name,
            "paid_from": company.acc("Bank"),
            "paid_to": company.acc("Payroll Payable"),
            "paid_amount": round(amount, 2),
            "received_amount": round(amount, 2),
            "reference_no": f"EXP-{s.rng.randint(100000, 999999)}",
            "reference_date": day,
            "branch": emp.branch,
            "references": [
                {
                    "reference_doctype": "Expense Claim",
                    "reference_name": claim["name"],
                    "allocated_amount": round(amount, 2),
                }
            ],
            "docstatus": 1,
        },
        on=day,
    )
