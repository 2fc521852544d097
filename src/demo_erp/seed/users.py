"""Demo users: roles, user permissions, passwords and API keys."""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from demo_erp import auth
from demo_erp.seed.base import Seeder


class DemoUser(NamedTuple):
    email: str
    full_name: str
    roles: tuple[str, ...]
    description: str


_MANAGERS = (
    "System Manager",
    "Accounts Manager",
    "Accounts User",
    "Sales Manager",
    "Sales User",
    "Purchase Manager",
    "Purchase User",
    "Stock Manager",
    "Stock User",
    "HR Manager",
    "HR User",
    "Projects Manager",
    "Projects User",
    "Auditor",
)
_BRANCH_MANAGER = ("Sales Manager", "Sales User", "Accounts User", "Stock User", "Purchase User")

DEMO_USERS: tuple[DemoUser, ...] = (
    DemoUser(
        "admin@demo.local",
        "Demo Admin",
        _MANAGERS,
        "System Manager with every manager role; sees everything",
    ),
    DemoUser(
        "accounts.manager@demo.local",
        "Grace Wanjiku",
        ("Accounts Manager", "Accounts User"),
        "Accounts Manager in both companies",
    ),
    DemoUser(
        "accounts@demo.local",
        "Brian Otieno",
        ("Accounts User",),
        "Accounts User restricted to Savanna Trading Ltd",
    ),
    DemoUser(
        "sales@demo.local",
        "Faith Njeri",
        ("Sales User",),
        "Sales User restricted to the Nairobi territory",
    ),
    DemoUser(
        "purchase@demo.local",
        "Dennis Kiprop",
        ("Purchase User",),
        "Purchase User: drafts purchase orders for approval",
    ),
    DemoUser(
        "purchase.manager@demo.local",
        "Amina Hassan",
        ("Purchase Manager", "Purchase User"),
        "Purchase Manager: approves purchase orders",
    ),
    DemoUser("stock@demo.local", "Kevin Mwangi", ("Stock User",), "Stock User (warehouses)"),
    DemoUser(
        "hr@demo.local",
        "Zawadi Achieng",
        ("HR Manager", "HR User"),
        "HR Manager: employees, leave, payroll",
    ),
    DemoUser(
        "employee@demo.local",
        "Juma Omondi",
        ("Employee",),
        "Employee: sees only their own employee record",
    ),
    DemoUser(
        "kisumu.manager@demo.local",
        "Wekesa Wafula",
        _BRANCH_MANAGER,
        "Branch manager restricted to the Kisumu branch of Savanna Trading Ltd",
    ),
    DemoUser(
        "mombasa.manager@demo.local",
        "Mohamed Hassan",
        _BRANCH_MANAGER,
        "Branch manager restricted to the Mombasa branch of Savanna Trading Ltd",
    ),
)

# User Permissions: user -> (allow, for_value). The demo employee's own record is added later.
USER_PERMISSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "accounts@demo.local": (("Company", "Savanna Trading Ltd"),),
    "sales@demo.local": (("Territory", "Nairobi"),),
    "kisumu.manager@demo.local": (("Branch", "Kisumu"), ("Company", "Savanna Trading Ltd")),
    "mombasa.manager@demo.local": (("Branch", "Mombasa"), ("Company", "Savanna Trading Ltd")),
}
DEMO_EMPLOYEE_USER = "employee@demo.local"
# User Defaults (Frappe's DefaultValue rows whose parent is the user): what the desk pre-fills.
USER_DEFAULTS: dict[str, tuple[tuple[str, str], ...]] = {
    "sales@demo.local": (("company", "Savanna Trading Ltd"),),
}


def api_credentials(seed: int, user: str) -> tuple[str, str]:
    """A key pair derived from the seed: stable across reseeds, different per seed."""
    digest = hashlib.sha256(f"demo-erp:{seed}:{user}".encode()).hexdigest()
    return digest[:15], digest[15:30]


def create_users(s: Seeder, seed: int, password: str) -> None:
    s.insert(
        "User",
        {
            "name": "Administrator",
            "email": "admin@example.com",
            "username": "administrator",
            "first_name": "Administrator",
            "full_name": "Administrator",
            "user_type": "System User",
            "roles": [{"role": "Administrator"}, {"role": "System Manager"}],
        },
    )
    users = ["Administrator"]
    for user in DEMO_USERS:
        first, _, last = user.full_name.partition(" ")
        s.insert(
            "User",
            {
                "email": user.email,
                "username": user.email.split("@")[0],
                "first_name": first,
                "last_name": last,
                "full_name": user.full_name,
                "user_type": "System User",
                "roles": [{"role": role} for role in user.roles],
            },
        )
        users.append(user.email)
        for allow, value in USER_PERMISSIONS.get(user.email, ()):
            add_user_permission(s, user.email, allow, value)
        for idx, (key, value) in enumerate(USER_DEFAULTS.get(user.email, ()), start=1):
            s.conn.execute(
                'insert into "tabDefaultValue" (name, parent, parenttype, parentfield, idx, '
                "defkey, defvalue) values (?, ?, 'User', 'defaults', ?, ?, ?)",
                (f"{user.email}-{key}", user.email, idx, key, value),
            )
    for name in users:
        auth.set_password(s.conn, name, password)
        auth.set_api_key(s.conn, name, *api_credentials(seed, name))


def add_user_permission(s: Seeder, user: str, allow: str, value: str) -> None:
    s.insert(
        "User Permission",
        {"user": user, "allow": allow, "for_value": value, "apply_to_all_doctypes": 1},
    )
