"""Leads, opportunities, contacts, addresses, projects and tasks."""

from __future__ import annotations

import datetime as dt

from demo_erp.seed import names
from demo_erp.seed.base import Seeder

STAGES = (
    ("Prospecting", 10),
    ("Qualification", 20),
    ("Needs Analysis", 35),
    ("Value Proposition", 50),
    ("Proposal/Price Quote", 65),
    ("Negotiation/Review", 80),
)


def _person(s: Seeder, kenyan: bool) -> tuple[str, str]:
    first, _ = s.pick(names.FIRST_NAMES_KE if kenyan else names.FIRST_NAMES_US)
    return first, s.pick(names.LAST_NAMES_KE if kenyan else names.LAST_NAMES_US)


def leads(s: Seeder) -> None:
    """Leads over the whole history; quotations to leads pick from these."""
    branches = list(s.branches.values())
    span = (s.today - s.start).days
    by_branch: dict[str, list[str]] = {}
    plans = sorted(
        (s.start + dt.timedelta(days=s.rng.randint(0, span)), i)
        for i in range(s.n(180, minimum=10))
    )
    for day, _ in plans:
        branch = s.weighted(branches, [b.weight for b in branches])
        company = s.companies[branch.company]
        kenyan = company.currency == "KES"
        first, last = _person(s, kenyan)
        business = s.pick(names.KE_NAME_HEADS if kenyan else names.US_NAME_HEADS)
        age = (s.today - day).days
        if age < 45:
            status = s.weighted(("Lead", "Open", "Replied", "Interested"), (3, 3, 2, 2))
        else:
            status = s.weighted(
                ("Converted", "Lost Quotation", "Do Not Contact", "Opportunity", "Replied"),
                (3, 2, 1, 2, 1),
            )
        doc = s.insert(
            "Lead",
            {
                "lead_name": f"{first} {last}",
                "company_name": f"{business} {s.pick(('Stores', 'Builders', 'Supplies', 'Ventures'))}",
                "email_id": f"{first.lower()}.{last.lower()}@{business.lower().replace(' ', '')}.example",
                "mobile_no": f"+254 7{s.rng.randint(10000000, 99999999)}"
                if kenyan
                else f"+1 {s.rng.randint(2010000000, 9899999999)}",
                "source": s.pick(names.LEAD_SOURCES),
                "status": status,
                "qualification_status": s.weighted(
                    ("Unqualified", "In Process", "Qualified"), (3, 2, 2)
                ),
                "territory": branch.territory,
                "lead_owner": "sales@demo.local"
                if branch.name == "Nairobi"
                else "admin@demo.local",
                "company": company.name,
            },
            on=day,
        )
        by_branch.setdefault(branch.name, []).append(doc["name"])
    s.data["leads_by_branch"] = by_branch


def opportunities(s: Seeder) -> None:
    year_ago = max(s.start, s.today - dt.timedelta(days=365))
    span = (s.today - year_ago).days
    plans = sorted(
        (year_ago + dt.timedelta(days=s.rng.randint(0, span)), i) for i in range(s.n(90, minimum=6))
    )
    for day, _ in plans:
        branch = s.weighted(list(s.branches.values()), [b.weight for b in s.branches.values()])
        company = s.companies[branch.company]
        leads_here = s.data["leads_by_branch"].get(branch.name) or []
        if leads_here and s.rng.random() < 0.4:
            source, party = "Lead", s.pick(leads_here)
        else:
            parties = s.data["customers_by_branch"][branch.name][0]
            source, party = "Customer", s.pick(parties).name
        stage, probability = s.pick(STAGES)
        age = (s.today - day).days
        status = (
            s.weighted(("Open", "Replied", "Quotation"), (4, 2, 2))
            if age < 60
            else s.weighted(("Converted", "Lost", "Closed", "Quotation"), (4, 3, 2, 1))
        )
        s.insert(
            "Opportunity",
            {
                "opportunity_from": source,
                "party_name": party,
                "opportunity_type": "Sales",
                "status": status,
                "sales_stage": stage,
                "probability": probability,
                "opportunity_amount": round(s.rng.uniform(800, 40_000) * company.fx, -1),
                "currency": company.currency,
                "expected_closing": day + s.days(14, 90),
                "transaction_date": day,
                "territory": branch.territory,
                "company": company.name,
            },
            on=day,
        )


def contacts_and_addresses(s: Seeder) -> None:
    s.at(s.start)
    for party in s.data["customers"]:
        kenyan = party.currency == "KES"
        branch = s.branches[party.branch]
        domain = party.name.lower().split()[0] + (".co.ke" if kenyan else ".com")
        for index in range(1 if s.rng.random() < 0.7 else 2):
            first, last = _person(s, kenyan)
            s.insert(
                "Contact",
                {
                    "first_name": first,
                    "last_name": last,
                    "full_name": f"{first} {last}",
                    "email_id": f"{first.lower()}@{domain}",
                    "mobile_no": f"+254 7{s.rng.randint(10000000, 99999999)}"
                    if kenyan
                    else f"+1 {s.rng.randint(2010000000, 9899999999)}",
                    "company_name": party.name,
                    "link_doctype": "Customer",
                    "link_name": party.name,
                    "is_primary_contact": int(index == 0),
                },
            )
        _address(s, party.name, "Customer", "Billing", branch.city, kenyan)
    for party in s.data["suppliers"]:
        kenyan = party.currency == "KES"
        first, last = _person(s, kenyan)
        s.insert(
            "Contact",
            {
                "first_name": first,
                "last_name": last,
                "full_name": f"{first} {last}",
                "email_id": f"{first.lower()}.{last.lower()}@supplier.example",
                "company_name": party.name,
                "link_doctype": "Supplier",
                "link_name": party.name,
                "is_primary_contact": 1,
            },
        )
        city = (
            s.pick(("Nairobi", "Mombasa", "Thika"))
            if kenyan
            else s.pick(("Dallas", "Columbus", "Newark"))
        )
        _address(s, party.name, "Supplier", "Billing", city, kenyan)
    for branch in s.branches.values():
        _address(
            s,
            branch.company,
            "Company",
            "Office",
            branch.city,
            s.companies[branch.company].currency == "KES",
            title=f"{branch.company} - {branch.name}",
        )


def _address(
    s: Seeder,
    party: str,
    doctype: str,
    kind: str,
    city: str,
    kenyan: bool,
    title: str | None = None,
) -> None:
    street = s.pick(names.STREETS_KE if kenyan else names.STREETS_US)
    s.insert(
        "Address",
        {
            "address_title": title or party,
            "address_type": kind,
            "address_line1": f"{s.rng.randint(1, 480)} {street}",
            "address_line2": f"P.O. Box {s.rng.randint(1000, 99999)}" if kenyan else None,
            "city": city,
            "country": "Kenya" if kenyan else "United States",
            "pincode": f"{s.rng.randint(100, 999)}00"
            if kenyan
            else f"{s.rng.randint(10000, 99999)}",
            "link_doctype": doctype,
            "link_name": party,
        },
    )


def projects(s: Seeder) -> None:
    customers = sorted(s.data["customers"], key=lambda c: (-c.weight, c.name))[:40]
    topics = list(names.PROJECT_TOPICS)
    span = (s.today - s.start).days
    for index in range(s.n(14, minimum=3)):
        party = s.pick(customers)
        branch = s.branches[party.branch]
        company = s.companies[branch.company]
        begin = s.start + dt.timedelta(days=s.rng.randint(30, max(31, span - 20)))
        end = begin + s.days(30, 150)
        done = end < s.today
        progress = (
            100.0
            if done
            else round(min(95.0, max(5.0, 100 * (s.today - begin).days / (end - begin).days)), 0)
        )
        title = f"{topics[index % len(topics)]} - {party.name}"
        doc = s.insert(
            "Project",
            {
                "project_name": title,
                "status": "Completed" if done else "Open",
                "customer": party.name,
                "company": company.name,
                "expected_start_date": begin,
                "expected_end_date": end,
                "percent_complete": progress,
                "estimated_costing": round(s.rng.uniform(5_000, 60_000) * company.fx, -2),
                "branch": branch.name,
            },
            on=min(begin, s.today),
        )
        subjects = names.TASK_SUBJECTS[: s.rng.randint(4, len(names.TASK_SUBJECTS))]
        step = (end - begin) / len(subjects)
        for number, subject in enumerate(subjects):
            t_start = begin + step * number
            t_end = begin + step * (number + 1)
            if t_end < s.today:
                status, completed = "Completed", t_end
            elif t_start <= s.today:
                status, completed = (
                    s.weighted(("Working", "Pending Review", "Overdue"), (3, 1, 1)),
                    None,
                )
            else:
                status, completed = "Open", None
            s.insert(
                "Task",
                {
                    "subject": subject,
                    "project": doc["name"],
                    "status": status,
                    "priority": s.weighted(("Low", "Medium", "High", "Urgent"), (2, 5, 2, 1)),
                    "exp_start_date": t_start,
                    "exp_end_date": t_end,
                    "completed_on": completed,
                    "description": f"{subject} for {title}",
                },
                on=min(t_start, s.today),
            )
