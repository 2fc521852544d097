"""'General ledger for account Debtors in March', 'what went through the bank account?': a
ledger question about accounts the user names. Words that name an Account record the user can
read (looked up in the chart of accounts, typo-tolerant) are the General Ledger's account
filter — "debtors" is then the Debtors account, not receivables — and the account's company is
the report's. Without such an account the request is read as before."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner import metric_plan, reporting
from erp_agent.planner.master_data import (
    ACCEPT,
    CLOSE,
    ask_which,
    by_country,
    match_score,
    probe_token,
    resolve,
)
from erp_agent.planner.metric_terms import figures_message, metric_terms, says
from erp_agent.planner.name_phrases import name_phrases, whole_first
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Call, Ctx, Step, enable, rows_of
from erp_agent.planner.terms import explicit, norm

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
    "balance", "balances", "closing", "opening", "book", "control", "expense", "expenses",
    "qtd", "q1", "q2", "q3", "q4", "costs", "cost", "debit", "debits", "credit", "credits"])  # fmt: skip


# Money moving through something, said as a verb ("what went through the bank in March").
_THROUGH = re.compile(r"\b(went|gone|go(?:es)?|passed|moved|came)\s+(through|into|in|out of)\b")


# A balance asked ("closing balance of Creditors on 30 Sep", "GL balance of cash"), unless it is
# a balance of something else than money on an account (leave, stock).
_BALANCE = re.compile(r"\bbalances?\b")
# "How much is sitting in the Rent account": what an account holds.
_HELD = re.compile(
    r"\bhow much (?:money |cash )?(?:is|was|do we have|have we got)\s+"
    r"(?:sitting |held |left |parked )?(?:in|on)\b"
)
_OTHER_BALANCE = re.compile(
    r"\b(leaves?|holidays?|vacation|stock|inventory|qty|quantity|quantities|units|days)\b"
)
# Words both a quantity and an asset account are named by ("the stock in hand balance"): such a
# balance is an account's only when the words are an account's whole name.
_EITHER = re.compile(r"\b(stock|inventory)\b")
# Money held in the bank or in cash: the balance of the Bank and Cash accounts.
_CASH = re.compile(
    r"\b(cash (?:in|at) (?:the )?bank|bank balances?|cash balances?|cash position|cash on hand|"
    r"money (?:in|at) the bank|how much (?:cash|money)\b.*\b(?:have|got|hold|sitting)|"
    r"in (?:the|our) bank(?: accounts?)?\s*\??$)"
)
BALANCE_METRIC = "account_balance"
MOVEMENT_METRIC = "ledger_net_movement"
_PERIOD_ROOTS = frozenset(["Income", "Expense"])
CASH_TYPES = ["Bank", "Cash"]


# Money spent on something ("marketing expense", "utilities booked against Nairobi"): when no
# figure is named, the words before may name an expense account.
_SPENT = re.compile(
    r"\b(expenses?|expenditure|spent|spend(?:ing)?|booked|costs"
    r"|cost(?!\s+(?:of|cent(?:er|re)s?|price|rate|prices)\b))\b"
)  # "what did rent cost us": a verb of money spent, not "cost of goods sold" or "cost center"


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    if req.doc_ids or REPORT not in ctx.catalog.reports:
        return False
    if ledger_figure(ctx) is not None:
        return req.kind in (Kind.REPORT, Kind.LIST, Kind.UNKNOWN, Kind.TOTAL)
    if spent_on_account(ctx):
        return True
    if req.kind not in (Kind.REPORT, Kind.LIST, Kind.UNKNOWN):
        return False
    return asks_ledger(req.text)


def spent_on_account(ctx: Ctx) -> bool:
    """Money spent said with no figure or records named ("marketing expense last quarter"):
    what may be an expense account's movement in the period."""
    req = ctx.req
    if not _SPENT.search(req.text.lower()) or req.kind not in (
        Kind.REPORT, Kind.LIST, Kind.UNKNOWN, Kind.TOTAL
    ):  # fmt: skip
        return False
    e = req.entity
    named = e is not None and e.kind.value == "transaction" and explicit(e, norm(req.text))
    return not named and not metric_plan.ranked(ctx.catalog, req)


def asks_balance(text: str) -> bool:
    """The balance of money on accounts: a balance said outright, cash held, or what an account
    holds."""
    low = text.lower()
    account = _ACCOUNT.search(low)
    if _OTHER_BALANCE.search(low) and not account:
        return False
    return bool(_BALANCE.search(low) or asks_cash(low) or (_HELD.search(low) and account))


def ledger_figure(ctx: Ctx) -> Any | None:
    """The ledger figure the words name ("total debits", "net movement") or a balance asked;
    None for any other question."""
    metrics = ctx.catalog.metrics
    low = norm(ctx.req.text)
    flows = bank_flows(low)
    said = [m for m in metrics.values() if getattr(m, "group", None) == "ledger"
            and any(says(flows, term) for term, _ in metric_terms(m))]  # fmt: skip
    if said and flows != low:
        return said[0]  # "the bank account's receipts": what came into it
    # The ranking over every metric only when a ledger figure's own words are there (it runs
    # on every planning call of every question).
    named = metric_plan.pick(ctx.catalog, ctx.req) if said else None
    if named is not None and named in said:
        return named
    if (asks_balance(ctx.req.text) or names_either(ctx.req.text)) and BALANCE_METRIC in metrics:
        return metrics[BALANCE_METRIC]
    return None


# A bank or cash account named as such: its receipts and payments are what went in and out.
_BANK_ACCOUNT = re.compile(r"\b(?:bank|cash)(?: and cash)? accounts?\b|\bbank - [a-z]+\b")
_FLOWS = {"receipts": "money in", "deposits": "money in", "payments": "money out",
          "withdrawals": "money out"}  # fmt: skip


def bank_flows(low: str) -> str:
    """'Bank account - total receipts and total payments': the money in and out of it."""
    if not _BANK_ACCOUNT.search(low):
        return low
    return re.sub(r"\b(" + "|".join(_FLOWS) + r")\b", lambda m: _FLOWS[m.group(1)], low)


def names_either(text: str) -> bool:
    """A balance of stock or inventory, said without "account": the Stock In Hand account's
    money or a quantity on hand, told apart by the chart of accounts (only an account's whole
    name makes it the account's)."""
    low = text.lower()
    other = {m.group(1) for m in _OTHER_BALANCE.finditer(low)}
    either = {m.group(1) for m in _EITHER.finditer(low)}
    return (
        bool(_BALANCE.search(low)) and bool(either) and other <= either and not _ACCOUNT.search(low)
    )


def asks_cash(text: str) -> bool:
    return bool(_CASH.search(text.lower()))


def asks_ledger(text: str) -> bool:
    """A ledger said outright, money moving through something, or an account's movements."""
    low = text.lower()
    moved = _MOVED.search(low) and _ACCOUNT.search(low)
    return bool(_LEDGER.search(low) or _THROUGH.search(low) or moved)


def phrases(text: str) -> list[str]:
    """What could be an account's name ("Debtors", "Debtors - ST", "cash in hand")."""
    return name_phrases(text, _OWN_WORDS, with_own=True)


# Words a company's name ends with that do not tell one company from another.
_COMPANY_SUFFIXES = frozenset(["ltd", "limited", "inc", "corp", "corporation", "co", "llc",
                               "plc", "gmbh", "sa", "company", "group"])  # fmt: skip


_COUNTRY_SIDE = re.compile(
    r"\b(?:the\s+)?([A-Za-z]{2,}?)\s+(?:company|side|entity|business|books)\b", re.IGNORECASE
)


def _company_named(ctx: Ctx) -> tuple[str, Step | None]:
    """'Creditors for Harbor Goods', 'cash, Savanna side': a company the words name (by its
    leading words) is the figure's company in this planning call; the text without those
    words is what may name accounts."""
    text = ctx.req.text
    if ctx.view.company or not ctx.has("company.list"):
        return text, None
    country = _COUNTRY_SIDE.search(text)
    if country is not None:
        # "For the kenyan company", "the US side": the one company in that country.
        company, lookup = by_country(ctx, country.group(1))
        if lookup is not None:
            return text, Step(calls=[lookup])
        if company is not None:
            ctx.view.company = company
            return text[: country.start()] + " " + text[country.end() :], None
    args = {"fields": ["id"], "limit": 20}
    r = ctx.result("company.list", args)
    if r is None:
        return text, Step(calls=[Call("company.list", args)])
    if not r.ok:
        return text, None
    found: list[tuple[str, re.Match[str]]] = []
    for row in rows_of(r):
        name = str(row.get("id") or "")
        words = [
            w for w in re.findall(r"[A-Za-z0-9&']+", name) if w.lower() not in _COMPANY_SUFFIXES
        ]
        if not words or len(words[0]) < 4:
            continue
        # Its leading word, then as many of its next words as are said after it.
        pattern = re.escape(words[0]) + "".join(rf"(?:\s+{re.escape(w)}" for w in words[1:])
        pattern += (
            ")?" * (len(words) - 1) + r"(?:\s+(?:" + "|".join(_COMPANY_SUFFIXES) + r")\b\.?)?"
        )
        m = re.search(rf"\b{pattern}\b", text, re.IGNORECASE)
        if m:
            found.append((name, m))
    if len(found) != 1:
        return text, None
    name, m = found[0]
    ctx.view.company = name
    return text[: m.start()] + " " + text[m.end() :], None


def _probe(name: str) -> dict[str, Any]:
    token = probe_token(name)
    return {
        "filters": [{"field": "name", "op": "like", "value": f"%{token}%"}],
        "fields": ["id", "name", "company", "root_type"],
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
    text, step = _company_named(ctx)
    if step is not None:
        return step
    words = [w for w in phrases(text) if w.lower() not in settled]
    kinds: dict[str, str] = {}  # account → its root type (Asset, Income, Expense…)
    pending: list[Call] = []
    options: dict[str, list[tuple[float, str, str]]] = {}
    for name in words:
        args = _probe(name)
        r = ctx.result("account.list", args)
        if r is None:
            if Call("account.list", args) not in pending:
                pending.append(Call("account.list", args))
            continue
        if not r.ok:
            continue
        scored = [
            (match_score(name, row, "name"), str(row["id"]), str(row.get("company") or ""))
            for row in rows_of(r)
            if row.get("id")
        ]
        kinds.update({str(row["id"]): str(row.get("root_type") or "") for row in rows_of(r)})
        best = max((s for s, _, _ in scored), default=0.0)
        if best >= ACCEPT:
            # Its exact name wins outright ("bank" is Bank, not Bank Accounts or Bank Charges).
            near = best if best > 100 else best - CLOSE
            options[name] = [m for m in scored if m[0] >= near]
    if pending:
        return Step(calls=pending)
    dropped = whole_first([w for w, found in options.items() if found])
    options = {w: found for w, found in options.items() if w not in dropped}
    figure = ledger_figure(ctx)
    if figure is not None:
        strict = not asks_balance(req.text) and names_either(req.text)
        steps = [
            _figure(ctx, f, matches, options, kinds, strict=strict)
            for f in [figure, *_also_said(ctx, figure)]
        ]
        # Several figures said ("total debits and total credits"): each, one after the other.
        return (metric_plan.together(steps) if len(steps) > 1 else None) or steps[0]
    if spent_on_account(ctx) and not asks_ledger(req.text):
        spent = {
            w: [m for m in found if kinds.get(m[1]) == "Expense"] for w, found in options.items()
        }
        spent = {w: found for w, found in spent.items() if found}
        movement = ctx.catalog.metrics.get(MOVEMENT_METRIC)
        if not spent or movement is None:
            return None  # no expense account of that name: other readings answer
        return _figure(ctx, movement, matches, spent, kinds, said=True)
    if not matches and not options:
        return _party_ledger(ctx)
    return _report(ctx, matches, options)


def _also_said(ctx: Ctx, figure: Any) -> list[Any]:
    """The other ledger figures the words name beside it ("total debits and total credits")."""
    low = bank_flows(norm(figures_message(ctx.catalog, ctx.req.text)))
    return [
        m
        for m in ctx.catalog.metrics.values()
        if getattr(m, "group", None) == "ledger" and m is not figure
        and m.name != BALANCE_METRIC
        and any(says(low, term) for term, _ in metric_terms(m))
        and any(says(low, term) for term, _ in metric_terms(figure))
    ]  # fmt: skip


def _figure(
    ctx: Ctx,
    metric: Any,
    picked: list[tuple[float, str, str]],
    options: dict[str, list[tuple[float, str, str]]],
    kinds: dict[str, str],
    *,
    said: bool = False,
    strict: bool = False,
) -> Step | None:
    """'Closing balance of Creditors on 30 Sep', 'how much cash is in the bank', 'debits on
    Bank - ST in October': the ledger figure of the accounts named (or, for cash, of the Bank
    and Cash accounts); a balance at the date asked (or today). A figure of no account named is
    left to the other kinds (a customer's balance: what it still owes). ``said``: the words
    are known to name accounts ("marketing expense"); ``strict``: only an account's whole name
    counts, and without one other kinds answer ("the stock balance of drills")."""
    req = ctx.req
    balance = metric.name == BALANCE_METRIC
    named = not strict and (
        said or req.as_of is not None or bool(_ACCOUNT.search(req.text.lower()))
    )
    # Only a name the chart of accounts holds as such counts without "account" or a date:
    # "Acme's balance" is what Acme owes, not an account that happens to look like it.
    exact = {w: [m for m in found if m[0] > 100] for w, found in options.items()}
    chosen = options if named else {w: found for w, found in exact.items() if found}
    accounts = {account for _, account, _ in picked}
    for words, found in chosen.items():
        company = ctx.view.company
        own = [m for m in found if not company or not m[2] or m[2] == company]
        per_company: dict[str, list[tuple[float, str, str]]] = {}
        for m in own:
            per_company.setdefault(m[2], []).append(m)
        if any(len(ms) > 1 for ms in per_company.values()):
            # Two accounts of one company fit the words as well: ask, never pick one.
            ranked = [(s, 0, "account", a, a) for s, a, _ in own]
            return ask_which(ctx, words, "account", ranked)
        accounts |= {account for _, account, _ in own}
    if not accounts and (strict or not (balance and asks_cash(req.text))):
        return _party_balance(ctx) if balance and not strict else None
    if not accounts:
        args = {"filters": [{"field": "account_type", "op": "in", "value": CASH_TYPES},
                            {"field": "is_group", "op": "=", "value": 0}],
                "fields": ["id", "name", "company"], "limit": 50}  # fmt: skip
        r = ctx.result("account.list", args)
        if r is None:
            return Step(calls=[Call("account.list", args)])
        if not r.ok:
            return None
        accounts = {str(row["id"]) for row in rows_of(r) if row.get("id")}
        if not accounts:
            return None
    req.settled += list(chosen)  # the words are the accounts now, no other parameter's
    resolved = {f"account {i}": ("account", a) for i, a in enumerate(sorted(accounts))}
    # Other names said ("utilities booked against the Nairobi branch"): the figure's filters,
    # never dropped. The company already in play is not named again.
    company = (ctx.view.company or "").lower()
    account_words = set(" ".join([*chosen, *accounts]).lower().split())
    others = [(h, v) for h, v in req.names
              if not set(v.lower().split()) <= account_words
              and not (company and company.startswith(v.lower()))]  # fmt: skip
    if others:
        filters, step = resolve(ctx, others, [d for d in metric.dimensions if d != "account"])
        if step is not None:
            return step
        resolved.update(filters)
    if balance and req.period is not None and req.as_of is None:
        if accounts and all(kinds.get(a) in _PERIOD_ROOTS for a in accounts):
            # An income or expense account's balance "this year" is what was posted to it
            # in the year (these accounts start every year at nil), not its lifetime total.
            metric = ctx.catalog.metrics.get(MOVEMENT_METRIC, metric)
        else:
            # A balance sheet account's balance is at the period's end (today at the latest).
            req.as_of, req.period = min(req.period.end, ctx.view.today), None
    return metric_plan.figure_step(ctx, metric, resolved)


_PARTIES = ("customer", "supplier")
# A party's balance is what is still open with it.
_PARTY_BALANCE = {"customer": "receivables", "supplier": "payables"}
_MANY_PARTIES = re.compile(r"\b(customers|suppliers|vendors|clients|debtors|creditors)\b")
# "And what about overdue?" after a party's balance: the part of it past its due date.
_PARTY_OVERDUE = {"customer": "overdue_receivables", "supplier": "overdue_payables"}
_OVERDUE = re.compile(r"\b(overdue|past due|late|behind)\b")


# Courtesies the spelling correction leaves as they are ("pls" is already "please"): never a
# party's name.
_FILLER = frozenset(["thx", "thanks", "asap"])


def _party_balance(ctx: Ctx) -> Step | None:
    """'What's the balance of Gulf Traders?': no account of that name, so what the customer
    still owes us (or we the supplier)."""
    if ctx.req.top or _MANY_PARTIES.search(ctx.req.text.lower()):
        return None  # "the 2 customers with the biggest balances": parties ranked, not one
    company = (ctx.view.company or "").lower()
    names = [(h if h in _PARTIES else None, v) for h, v in ctx.req.names
             if not (company and company.startswith(v.lower()))]  # fmt: skip
    # "hardware's balance with us": a party typed in lower case, kept only when found.
    loose = [] if names else [
        w for w in phrases(ctx.req.text)
        if w.lower() not in _FILLER and not set(w.lower().split()) & _OWN_WORDS
    ]  # fmt: skip
    names = names or [(None, w) for w in loose]
    if not names:
        return None
    found, step = resolve(ctx, names, _PARTIES, optional=loose)
    if step is not None:
        return step
    kinds = {dim for dim, _ in found.values()}
    table = _PARTY_OVERDUE if _OVERDUE.search(ctx.req.text.lower()) else _PARTY_BALANCE
    metric = ctx.catalog.metrics.get(table[next(iter(kinds))]) if len(kinds) == 1 else None
    if metric is None:
        return None
    ctx.req.settled += list(found)
    return metric_plan.figure_step(ctx, metric, found)


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
