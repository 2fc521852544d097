"""Passwords, API keys and sessions (Frappe's LoginManager and token auth, in small)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field

_ITERATIONS = 20_000


def _hash(password: str, salt: str) -> str:
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), _ITERATIONS)
    return f"pbkdf2${salt}${digest.hex()}"


def set_password(conn: sqlite3.Connection, user: str, password: str) -> None:
    conn.execute(
        "insert into __Auth (user, password) values (?, ?) "
        "on conflict(user) do update set password = excluded.password",
        (user, _hash(password, secrets.token_hex(8))),
    )


def check_password(conn: sqlite3.Connection, user: str, password: str) -> bool:
    row = conn.execute("select password from __Auth where user = ?", (user,)).fetchone()
    if row is None:
        return False
    _, salt, _ = str(row["password"]).split("$")
    return hmac.compare_digest(_hash(password, salt), str(row["password"]))


def set_api_key(conn: sqlite3.Connection, user: str, api_key: str, api_secret: str) -> None:
    """Store a key pair. The demo keeps the secret readable so `demo-erp users` can print it."""
    conn.execute('update "tabUser" set api_key = ? where name = ?', (api_key, user))
    conn.execute(
        "create table if not exists __ApiSecrets (user text primary key, api_secret text not null)"
    )
    conn.execute(
        "insert into __ApiSecrets (user, api_secret) values (?, ?) "
        "on conflict(user) do update set api_secret = excluded.api_secret",
        (user, api_secret),
    )


def user_for_api_key(conn: sqlite3.Connection, api_key: str, api_secret: str) -> str | None:
    conn.execute(
        "create table if not exists __ApiSecrets (user text primary key, api_secret text not null)"
    )
    row = conn.execute(
        'select u.name, s.api_secret, u.enabled from "tabUser" u '
        "join __ApiSecrets s on s.user = u.name where u.api_key = ?",
        (api_key,),
    ).fetchone()
    if row is None or not hmac.compare_digest(str(row["api_secret"]), api_secret):
        return None
    return str(row["name"]) if row["enabled"] else None


def api_secret(conn: sqlite3.Connection, user: str) -> str | None:
    row = conn.execute("select api_secret from __ApiSecrets where user = ?", (user,)).fetchone()
    return str(row["api_secret"]) if row else None


def new_session(conn: sqlite3.Connection, user: str, expiry_seconds: float) -> str:
    sid = secrets.token_hex(28)
    conn.execute(
        "insert into __Sessions (sid, user, expires) values (?, ?, ?)",
        (sid, user, time.time() + expiry_seconds),
    )
    return sid


def session_user(conn: sqlite3.Connection, sid: str) -> str | None:
    """The user of a live session; an expired one is removed and gives None."""
    row = conn.execute("select user, expires from __Sessions where sid = ?", (sid,)).fetchone()
    if row is None:
        return None
    if float(row["expires"]) < time.time():
        conn.execute("delete from __Sessions where sid = ?", (sid,))
        return None
    return str(row["user"])


def end_session(conn: sqlite3.Connection, sid: str) -> None:
    conn.execute("delete from __Sessions where sid = ?", (sid,))


@dataclass
class LoginAttemptTracker:
    """Frappe's LoginAttemptTracker: consecutive failed logins of one user, counted from the
    first failure; at ``max_attempts`` the user is locked until ``lock_interval`` seconds after
    that first failure. A successful login clears the count. (Frappe keeps this in its cache;
    one demo process keeps it in memory.)"""

    max_attempts: int
    lock_interval: float
    _failures: dict[str, tuple[int, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def is_user_allowed(self, user: str) -> bool:
        if self.max_attempts <= 0:
            return True
        with self._lock:
            count, first = self._failures.get(user, (0, 0.0))
            return not (count >= self.max_attempts and time.time() < first + self.lock_interval)

    def add_failure_attempt(self, user: str) -> None:
        now = time.time()
        with self._lock:
            count, first = self._failures.get(user, (0, now))
            if now >= first + self.lock_interval:  # the window passed: start counting again
                count, first = 0, now
            self._failures[user] = (count + 1, first)

    def add_success_attempt(self, user: str) -> None:
        with self._lock:
            self._failures.pop(user, None)
