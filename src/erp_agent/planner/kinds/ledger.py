"""'General ledger for account Debtors in March', 'what went through the bank account?': a
ledger question about accounts the user names. Words that name an Account record the user can
read (looked up in the chart of accounts, typo-tolerant) are the General Ledger's account
filter — "debtors" is then the Debtors account, not receivables — and the account's company is
the report's. Without such an account the request is read as before."""

from __future__ import annotations

import calendar
import re
from typing import Any

from erp_agent.planner import reporting, vocabulary
from erp_agent.planner.master_data import (
    ACCEPT,
    CLOSE,
    ask_which,
    match_score,
    probe_token,
    resolve,
)
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Call, Ctx, Step, enable, rows_of

REPORT = "general_ledger"
# A ledger said outright, or money moving through an account ("went through the bank account").
_LEDGER = re.compile(
    r"\b(general ledger|ledger|gl|postings?|posted|account statement|statement of account)\b"
)
_MOVED = re.compile(
    r"\b(went|gone|go(?:es)?|passed|moved|came|entries|transactions|movements?|activity)\b"
)
_ACCOUNT = re.compile(r"\baccounts?\b")
# Words of the ledger question itself, never an account's name.
_OWN_WORDS = frozenset(["general", "ledger", "gl", "posting", "postings", "posted", "statement",
    "account", "accounts", "entries", "entry", "transactions", "transaction", "movements",
    "movement", "activity", "went", "gone", "go", "goes", "passed", "moved", "came", "ytd", "mtd",
    "qtd", "q1", "q2", "q3", "q4"])  # fmt: skip
_MONTH_WORDS = frozenset(m.lower() for m in (*calendar.month_name, *calendar.month_abbr) if m)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9&'.]*|-")


# Money moving through something, said as a verb ("what went through the bank in March").
_THROUGH = re.compile(r"\b(went|gone|go(?:es)?|passed|moved|came)\s+(through|into|in|out of)\b")


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    if req.kind not in (Kind.REPORT, Kind.LIST, Kind.UNKNOWN) or req.doc_ids:
        return False
    if REPORT not in ctx.catalog.reports:
        return False
    return asks_ledger(req.text)


def asks_ledger(text: str) -> bool:
    """A ledger said outright, money moving through something, or an account's movements."""
    low = text.lower()
    moved = _MOVED.search(low) and _ACCOUNT.search(low)
    return bool(_LEDGER.search(low) or _THROUGH.search(low) or moved)


def phrases(text: str) -> list[str]:
    """Runs of the words left once the question's own words, grammar and dates are taken out:
    what could be an account's name ("Debtors", "Debtors - ST", "cash")."""
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text):
        low = token.lower().strip("'.").removesuffix("'s")
        keep = token == "-" or not (
            low in vocabulary.GRAMMAR or low in _OWN_WORDS or low in _MONTH_WORDS or low.isdigit()
        )
        if keep:
            runs[-1].append(re.sub(r"'s$", "", token))
        elif runs[-1]:
            runs.append([])
    out = [" ".join(r).strip(" -") for r in runs]
    return list(dict.fromkeys(p for p in out if p and p != "-"))


def _probe(name: str) -> dict[str, Any]:
    token = probe_token(name)
    return {
        "filters": [{"field": "name", "op": "like", "value": f"%{token}%"}],
        "fields": ["id", "name", "company"],
        "limit": 50,
    }


def handle(ctx: Ctx) -> Step | None:
    """The General Ledger of the accounts named; None when no account is named."""
    if not ctx.has("account.list"):
        return enable(ctx, "account.list")
    req = ctx.req
    # An account picked in reply to "which account?" is taken as picked.
    matches = [(101.0, v, "") for h, v in req.names if h == "account"]
    settled = {s.lower() for s in req.settled}
    words = [w for w in phrases(req.text) if w.lower() not in settled]
    pending: list[Call] = []
    options: dict[str, list[tuple[float, str, str]]] = {}
    for name in words:
        args = _probe(name)
        r = ctx.result("account.list", args)
        if r is None:
            pending.append(Call("account.list", args))
            continue
        if not r.ok:
            continue
        scored = [
            (match_score(name, row, "name"), str(row["id"]), str(row.get("company") or ""))
            for row in rows_of(r)
            if row.get("id")
        ]
        best = max((s for s, _, _ in scored), default=0.0)
        if best >= ACCEPT:
            # Its exact name wins outright ("bank" is Bank, not Bank Accounts or Bank Charges).
            near = best if best > 100 else best - CLOSE
            options[name] = [m for m in scored if m[0] >= near]
    if pending:
        return Step(calls=pending)
    if not matches and not options:
        return _party_ledger(ctx)
    return _report(ctx, matches, options)


_PARTIES = ("customer", "supplier")


def _party_ledger(ctx: Ctx) -> Step | None:
    """'Ledger for Acme Ltd': no account of that name, so the party's ledger (its postings on
    every account); a name found as neither is said so, never dropped from the report."""

    names = [(h if h in _PARTIES else None, v) for h, v in ctx.req.names]
    if not names or not ctx.has(f"report.{REPORT}"):
        return None
    found, step = resolve(ctx, names, _PARTIES)
    if step is not None:
        return step
    kinds = {dim for dim, _ in found.values()}
    if len(kinds) != 1:
        return None  # a customer and a supplier at once: one party type per ledger
    ctx.req.report, ctx.req.kind = ctx.catalog.reports[REPORT], Kind.REPORT
    ctx.req.settled += list(found)  # the names are the party now, no other parameter's
    party = list(dict.fromkeys(i for _, i in found.values()))
    return reporting.report(ctx, {"party_type": next(iter(kinds)), "party": party})


def _report(
    ctx: Ctx, picked: list[tuple[float, str, str]], options: dict[str, list[tuple[float, str, str]]]
) -> Step | None:

    req = ctx.req
    name = f"report.{REPORT}"
    if not ctx.has(name):
        step = enable(ctx, name)
        if step is not None:
            return step
    req.report, req.kind = ctx.catalog.reports[REPORT], Kind.REPORT
    companies = {c for found in options.values() for _, _, c in found if c}
    if len(companies) == 1 and not ctx.view.company:
        # "Debtors - HG" names its company: the report runs for it (this planning call's view).
        ctx.view.company = next(iter(companies))
    company, step = reporting.company_step(ctx)
    if step is not None:
        return step
    accounts = [a for _, a, _ in picked]
    for words, found in options.items():
        own = [m for m in found if not m[2] or m[2] == company]
        if len(own) > 1:
            # Two accounts fit the words as well: ask, never pick one.
            ranked = [(s, 0, "account", a, a) for s, a, _ in own]
            return ask_which(ctx, words, "account", ranked)
        accounts += [a for _, a, _ in own]
    if not accounts:
        return None
    req.settled += list(options)  # the words are the accounts now, no other parameter's
    return reporting.report(ctx, {"account": list(dict.fromkeys(accounts))})
