"""Who is asking and in which settings: passed to every data function."""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass, field
from typing import Any

ADMINISTRATOR = "Administrator"
GUEST = "Guest"
AUTOMATIC_ROLES = ("All", "Guest")


@dataclass
class Settings:
    """How the demo ERP behaves. ``version`` picks v15 or v16 API behaviour."""

    db_path: str
    version: int = 15
    today: dt.date | None = None
    session_expiry_seconds: float = 170 * 3600
    # System Settings' login attempt limits (Frappe's defaults): after this many consecutive
    # failures the account is locked for allow_login_after_fail seconds; 0 turns it off.
    allow_consecutive_login_attempts: int = 10
    allow_login_after_fail: int = 60
    allow_error_traceback: bool = True
    # System Settings' "Allow Login using User Name" (Frappe also accepts the email, as here).
    allow_login_using_user_name: bool = True
    # A test hook: seconds every write waits after it is committed, before the reply is sent,
    # so a client can be killed while its write is done but unanswered (crash recovery tests).
    write_delay: float = 0.0

    def current_date(self) -> dt.date:
        return self.today or dt.date.today()


@dataclass
class Ctx:
    conn: sqlite3.Connection
    settings: Settings
    user: str = GUEST
    roles: frozenset[str] = frozenset({"Guest"})
    user_type: str = "Website User"
    messages: list[dict[str, Any]] = field(default_factory=list)
    _user_permissions: dict[str, set[str]] | None = None

    @property
    def is_admin(self) -> bool:
        return self.user == ADMINISTRATOR

    @property
    def today(self) -> dt.date:
        return self.settings.current_date()

    def now(self) -> str:
        return dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")

    def user_permissions(self) -> dict[str, set[str]]:
        """The user's User Permission map: allowed DocType -> allowed values."""
        if self._user_permissions is None:
            perms: dict[str, set[str]] = {}
            if not self.is_admin:
                rows = self.conn.execute(
                    'select allow, for_value from "tabUser Permission" where user = ?',
                    (self.user,),
                )
                for row in rows:
                    perms.setdefault(row["allow"], set()).add(row["for_value"])
            self._user_permissions = perms
        return self._user_permissions


def load_roles(conn: sqlite3.Connection, user: str) -> tuple[frozenset[str], str]:
    if user == ADMINISTRATOR:
        return frozenset({"Administrator", "System Manager", "All", "Guest"}), "System User"
    row = conn.execute('select user_type from "tabUser" where name = ?', (user,)).fetchone()
    rows = conn.execute('select role from "tabHas Role" where parent = ?', (user,)).fetchall()
    roles = {r["role"] for r in rows} | set(AUTOMATIC_ROLES)
    user_type = row["user_type"] if row else "Website User"
    if user_type == "System User":
        roles.add("Desk User")
    return frozenset(roles), user_type


def as_user(conn: sqlite3.Connection, settings: Settings, user: str) -> Ctx:
    roles, user_type = load_roles(conn, user)
    return Ctx(conn=conn, settings=settings, user=user, roles=roles, user_type=user_type)
