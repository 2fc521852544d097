"""Names in a request resolved against the ERP's master data, read as the user.

"Savanna Trading", "Nairobi Stores", "Grey Hammer", "SKU-8498-GRY": each is looked up in the
records of the dimensions that could hold it (customers, branches, warehouses, items…) with a
short `like` probe through the list tools — so only what the user may see is found — and
matched with typo tolerance (rapidfuzz). A name two records fit equally well is asked about
(one question with choices), never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz import fuzz, utils

from erp_agent.planner import vocabulary
from erp_agent.planner.metric_terms import metric_scores
from erp_agent.planner.steps import Call, Ctx, Step, call, rows_of, say
from erp_agent.planner.terms import explicit, has_term, norm

ACCEPT = 80  # a weaker match is no match
LOOSE_ACCEPT = 84
CLOSE = 4  # two records this close in score are both plausible
_CODE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")


def probe_token(name: str) -> str:
    """The longest word of the name, cut short so a typo at its end still matches."""
    words = sorted(re.findall(r"[\w&]+", name), key=len, reverse=True)
    word = words[0] if words else name
    return word if len(word) <= 4 else word[: max(4, len(word) - 2)]


def retry_tokens(name: str) -> list[str]:
    """Shorter probes for a name the first found nothing for: the first three letters of its
    longest word, so a typo inside it ("hamers" for Hammer) still reaches the record, then its
    next-longest word ("orange pakcing tape" is found by "oran"), then the end of its longest
    word, so a name written with punctuation the user left out ("mpesa" for M-Pesa) is found.
    """
    words = sorted(re.findall(r"[\w&]+", name), key=len, reverse=True)
    out = []
    if words and len(words[0]) >= 5:
        out.append(words[0][:3])
    if len(words) > 1 and len(words[1]) >= 4:
        out.append(probe_token(words[1]))
    if words and len(words[0]) >= 5:
        out.append(words[0][-4:])
    first = probe_token(name)
    return [t for t in dict.fromkeys(out) if t.lower() != first.lower()]


def probe_args(ctx: Ctx, entity_name: str, name: str, retry: int = 0) -> dict[str, Any] | None:
    """The list call that looks for ``name``; ``retry`` > 0: the n-th shorter probe, if any."""
    entity = ctx.catalog.entities.get(entity_name)
    if entity is None:
        return None
    title = entity.title_field
    fields = ["id"] + ([title.name] if title is not None and title.name != "id" else [])
    token = probe_token(name)
    if retry:
        tokens = [] if _CODE.match(name) else retry_tokens(name)
        if len(tokens) < retry:
            return None
        token = tokens[retry - 1]
    if _CODE.match(name) and not retry:
        flt = {"field": "id", "op": "=", "value": name}
    elif title is not None and title.filterable:
        flt = {"field": title.name, "op": "like", "value": f"%{token}%"}
    else:
        flt = {"field": "id", "op": "like", "value": f"%{token}%"}
    return {"filters": [flt], "fields": fields, "limit": 50}


_WORD_FIT = 75  # a typed word is the record's word at this rapidfuzz ratio ("stel" is "steel")


def match_score(name: str, row: dict[str, Any], title: str | None) -> float:
    texts = [str(row.get("id") or "")] + ([str(row.get(title) or "")] if title else [])
    best = 0.0
    for text in texts:
        if not text:
            continue
        if text.lower() == name.lower() or _singular(text) == _singular(name):
            return 101.0  # its own name, or that name in the plural ("grey tape measures")
        if _squashed(text) == _squashed(name):
            return 100.0  # "mpesa" is M-Pesa: the same letters
        # "Nairobi Stores" for "Nairobi Stores - ST": the name inside the id counts fully;
        # "cordless drills" fits every "… Cordless Drill" equally (then the user picks).
        clean = utils.default_process
        fit = max(
            fuzz.WRatio(name, text, processor=clean),
            fuzz.token_set_ratio(_singular(name), _singular(text), processor=clean),
        )
        best = max(best, fit * _covered(name, text))
    return best


def _covered(name: str, text: str) -> float:
    """The share of the words typed that the record has (typos allowed): the branch "Nairobi"
    holds one word of "Nairobi Steel Works", so it is not that supplier however well the one
    word fits, while "Nairobi Stores - ST" holds all of "Nairobi Stores"."""
    words = re.findall(r"[\w&]+", _singular(name))
    theirs = re.findall(r"[\w&]+", _singular(text))
    if not words or not theirs:
        return 0.0
    return sum(max(fuzz.ratio(w, t) for t in theirs) >= _WORD_FIT for w in words) / len(words)


def _word_score(name: str, row: dict[str, Any], title: str | None) -> float:
    """Every word typed must fit a word of the record ("savana trading" is Savanna Trading
    Ltd, not Liberty Trading): the mean of each word's best fit."""
    words = _singular(name).split()
    best = 0.0
    for text in [str(row.get("id") or "")] + ([str(row.get(title) or "")] if title else []):
        if text.lower() == name.lower() or _singular(text) == _singular(name):
            return 101.0  # its own name, or that name in the plural
        if _squashed(text) == _squashed(name):
            return 100.0  # "mpesa" is M-Pesa, "ecash" is E-Cash: the same letters
        theirs = re.findall(r"[\w&]+", _singular(text))
        if words and theirs:
            fits = [max(_fit(w, t) for t in theirs) for w in words]
            best = max(best, sum(fits) / len(fits))
    return best


_PREFIX_FIT = 85.0  # "lake" of Lakeside Hardware: a word's start typed, a loose name's fit


def _fit(typed: str, word: str) -> float:
    """How well a typed word fits a word of a record's name: spelling, or its start ("lake"
    for "Lakeside", four letters or more) as people shorten a name they know."""
    ratio = float(fuzz.ratio(typed, word))
    if len(typed) >= 4 and len(word) > len(typed) and word.startswith(typed):
        return max(ratio, _PREFIX_FIT)
    return ratio


def _squashed(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _singular(text: str) -> str:
    # "&" is "and" as people type it ("Machakos Wire and Cable" is Machakos Wire & Cable Ltd).
    words = text.lower().replace("&", " and ").split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def resolve(
    ctx: Ctx,
    names: Sequence[tuple[str | None, str]],
    dimensions: Sequence[str],
    optional: Sequence[str] = (),
    values_of: str | None = None,
    prefer: Mapping[str, str] | None = None,
) -> tuple[dict[str, tuple[str, str]], Step | None]:
    """name → (dimension, record id) for every name found; or the step that looks them up /
    asks which one is meant. Names found nowhere are reported, never dropped — except the
    ``optional`` ones (lowercase words that only might be names), kept only when found. A name
    the text ties to a dimension ("the Nakuru branch") is looked up there only; a name with a
    ``prefer``red dimension is taken there when it fits a record of it at all ("what about
    Kisumu?" after a warehouse is the Kisumu warehouse, not the Kisumu branch)."""
    catalog = ctx.catalog
    dims = getattr(catalog, "dimensions", {}) or {}
    # A name tied to a kind of record is looked up there, and among the companies too: "Harbor
    # Goods supplier bills" are the company's bills when no supplier is called that.
    where: dict[str, list[str]] = {
        name: list(dict.fromkeys([hint, *_owner(catalog, hint, dimensions),
                                  *(["company"] if "company" in dimensions else [])]))
        if hint is not None and hint in dimensions
        else list(dimensions)
        for hint, name in names
    }  # fmt: skip
    # A name tied to a kind of record is that record when it fits one; else the company that
    # owns such records ("the Savanna warehouses" are Savanna Trading's warehouses).
    prefer = {**{n: h for h, n in names if h is not None and h in dimensions}, **(prefer or {})}
    wanted = list(dict.fromkeys(d for ds in where.values() for d in ds))
    enable = _enable_lists(ctx, [getattr(dims.get(d), "entity", None) or "" for d in wanted])
    if enable is not None:
        return {}, enable
    pending: list[Call] = []
    found: dict[str, tuple[str, str]] = {}
    titles: dict[str, str] = {}  # a found record's id → its title ("Grey Hammer")
    near: dict[str, list[tuple[float, str, str]]] = {}
    # Names said outright first: a loose word may be part of what one of them found.
    # Of the loose words, longer runs first: "grey office chairs" found, "chair" is part of it.
    ordered = sorted(
        where.items(), key=lambda kv: (kv[0] in optional, -len(kv[0].split()) * (kv[0] in optional))
    )
    for name, dims_for in ordered:
        if name in optional and any(f" {name.lower()} " in f" {f.lower()} " for f in found):
            continue  # "wall switches" once "blue wall switches" found its record
        if name in optional and any(
            holds(titles.get(rec, rec), name) or holds(rec, name) for _, rec in found.values()
        ):
            continue  # "hardware" of "Jambo hardware", once Jambo Hardware & Tools was found
        if any(
            holds(rec, name) and joined(ctx.req.text, other, name)
            for other, (_, rec) in found.items()
        ):
            continue  # "Cable" of "Machakos Wire and Cable", once Machakos Wire & Cable Ltd was found
        candidates: list[tuple[float, int, str, str, str]] = []  # score, order, dim, id, title
        near.setdefault(name, [])
        for order, dim_name in enumerate(dims_for):
            dim = dims.get(dim_name)
            entity_name = getattr(dim, "entity", None)
            if values_of and entity_name not in catalog.entities:
                # No records of this kind here (a payment method that is only a column's
                # value): the values the figure's own records carry, as the ERP groups them.
                got, ask = _values(ctx, values_of, dim_name, dim, name, order)
                if ask is not None and ask not in pending:
                    pending.append(ask)
                candidates += got
                continue
            if not entity_name or not ctx.has(f"{entity_name}.list"):
                continue
            args = probe_args(ctx, entity_name, name)
            if args is None:
                continue
            entity = catalog.entities[entity_name]
            title = entity.title_field.name if entity.title_field is not None else None
            # Lowercase words that only might be a name must fit a record closely.
            floor = LOOSE_ACCEPT if name in optional else ACCEPT
            retries = [probe_args(ctx, entity_name, name, retry=n) for n in (1, 2, 3)]
            for probe in (args, *retries):
                if probe is None or (probe is not args and any(c[0] >= 100 for c in candidates)):
                    break  # a shorter probe is for a name missed, not one already found whole
                r = ctx.result(f"{entity_name}.list", probe)
                if r is None:
                    call = Call(f"{entity_name}.list", probe)
                    if call not in pending:  # two names may need one probe ("white", "white tape")
                        pending.append(call)
                    break
                if not r.ok:
                    break
                before = len(candidates)
                for row in rows_of(r):
                    score = (
                        _word_score(name, row, title)
                        if name in optional
                        else match_score(name, row, title)
                    )
                    label = str(row.get(title) or row.get("id")) if title else str(row.get("id"))
                    if score >= floor:
                        candidates.append((score, order, dim_name, str(row.get("id")), label))
                    elif score >= _NEAR:
                        near[name].append((score, dim_name, label))
                if len(candidates) > before:
                    break  # found here: the shorter probe is only for a name the first missed
        if pending:
            continue
        if ("company" in dims_for and not candidates) or (
            "company" in dimensions
            and (
                _demonym(name, candidates)
                or _SIDE.search(_after(ctx.req.text, name))
                or _country_alone(name)
            )
        ):
            # "Kenyan branches", "the salary account in Kenya": the company in that country.
            company, lookup = by_country(ctx, name)
            if lookup is not None:
                pending.append(lookup)
                continue
            if company is not None:
                candidates = [(100.0, 0, "company", company, company)]
        wanted_dim = (prefer or {}).get(name)
        if wanted_dim is not None and any(c[2] == wanted_dim for c in candidates):
            candidates = [c for c in candidates if c[2] == wanted_dim]
        if not candidates and name in optional:
            if any(holds(v, name) for v in earlier_values(ctx)):
                continue  # "ohio valley" of the question before, its supplier, is no item
            if _tolerated(ctx, name):
                # An English word the catalog gives no meaning and no record is named by, in a
                # question whose subject is clear: it fills the sentence; the reading the
                # answer shows says it was left out.
                ctx.req.ignored.append(name)
                continue
            if not vocabulary.said_as_name(ctx.req.text, name, catalog):
                return found, say(
                    f"No records found for “{name}” among what you can see "
                    f"({', '.join(d.replace('_', ' ') for d in dims_for[:6])}), and I didn't "
                    "understand it as anything else, so I can't answer that and won't guess. "
                    "Check the spelling, give its code, or ask about your ERP data."
                )
        if not candidates:
            seen = [d for d in dims_for if _visible(ctx, dims.get(d))] or list(dims_for)
            return found, say(_not_found(catalog, name, seen, near.get(name, [])))
        candidates.sort(key=lambda c: (-c[0], c[1]))
        best = candidates[0]
        twins = _same_in_each_company(best, candidates)
        if twins:
            # "Rent" is each company's own Rent account ("Rent - ST", "Rent - HG"): all of them,
            # so the figure is per company, never one company's picked at random.
            found[name] = (best[2], best[3])
            titles[best[3]] = best[4]
            for twin in twins:
                found[f"{name} ({twin[3]})"] = (twin[2], twin[3])
            continue
        rivals = [c for c in candidates[1:] if c[0] >= best[0] - CLOSE and c[2] == best[2]]
        rivals = [c for c in rivals if c[3] != best[3]]
        offered = _offered_before(ctx, [best, *rivals]) if rivals and best[0] < 101 else None
        if offered is not None:
            # "What about otieno?" after choosing between Brian Cheruiyot and Brian Otieno:
            # the one of them this conversation offered already.
            best, rivals = offered, []
        if rivals and best[0] < 101:
            return found, ask_which(ctx, name, best[2], [best, *rivals])
        found[name] = (best[2], best[3])
        titles[best[3]] = best[4]
    if pending:
        return found, Step(calls=pending)
    return found, None


def joined(text: str, first: str, then: str) -> bool:
    """Whether the text says ``first`` and ``then`` joined by "and" or "&" ("Wire and Cable"),
    as one name may be written."""
    pattern = rf"(?<!\w){re.escape(first)}\s+(?:and|&)\s+{re.escape(then)}(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


def _offered_before(
    ctx: Ctx, candidates: Sequence[tuple[float, int, str, str, str]]
) -> tuple[float, int, str, str, str] | None:
    """The one candidate an earlier question of this conversation offered as a choice."""
    offered: set[str] = set()
    for entry in ctx.view.state.get("requests") or []:
        asked = entry.get("pending") if isinstance(entry, dict) else None
        options = asked.get("options") if isinstance(asked, dict) else None
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict):
                offered.add(str(option.get("value") or option.get("label") or ""))
    hits = [c for c in candidates if c[3] in offered]
    return hits[0] if len(hits) == 1 else None


def earlier_values(ctx: Ctx, dimension: str | None = None) -> list[str]:
    """The records the conversation's last figure was filtered to (of one dimension, when
    given): a loose word of an earlier message that one of them holds was settled then, and is
    no other record now; "the price, for comparison" after an item's figure is that item's."""
    last = ctx.view.state.get("last_query")
    args = last.get("args") if isinstance(last, dict) else None
    flts = args.get("filters") if isinstance(args, dict) else None
    values: list[str] = []
    for f in flts if isinstance(flts, list) else []:
        if not isinstance(f, dict) or dimension not in (None, f.get("dimension")):
            continue
        value = f.get("value")
        values += [
            v for v in (value if isinstance(value, list) else [value]) if v and isinstance(v, str)
        ]
    return values


def holds(record: str, words: str) -> bool:
    """Whether a record's name has these words (any case, singular or plural) where one of its
    words starts."""
    return re.search(rf"(?<![\w&]){re.escape(_singular(words))}", _singular(record)) is not None


def _owner(catalog: Any, hint: str, dimensions: Sequence[str]) -> list[str]:
    """The company dimension, when the records ``hint`` names belong to a company."""
    dim = (getattr(catalog, "dimensions", {}) or {}).get(hint)
    entity = catalog.entities.get(getattr(dim, "entity", None) or "")
    owned = entity is not None and "company" in entity.fields and hint != "company"
    return ["company"] if owned and "company" in dimensions else []


def _same_in_each_company(
    best: tuple[float, int, str, str, str], candidates: list[tuple[float, int, str, str, str]]
) -> list[tuple[float, int, str, str, str]]:
    """Records of the best one's kind with its name and score but another company's suffix
    (ERPNext names accounts, cost centres and warehouses "<name> - <company abbr>")."""
    stem = best[3].rsplit(" - ", 1)[0]
    if " - " not in best[3]:
        return []
    return [
        c
        for c in candidates[1:]
        if c[2] == best[2]
        and c[0] == best[0]
        and c[3] != best[3]
        and c[3].rsplit(" - ", 1)[0] == stem
    ]


def _tolerated(ctx: Ctx, name: str) -> bool:
    """A word left out of the reading rather than declined: English, not said where a name is
    said, and in a question that names its subject (a figure, its records by name, a document
    or a report) — "show me turnover for the board pack", not "write a poem about invoices"."""
    req = ctx.req
    if not vocabulary.is_english(name) or vocabulary.said_as_name(req.text, name, ctx.catalog):
        return False
    # What the request asks to be made ("write a poem about …", "tell me a joke"): the object
    # of its opening verb is the request itself, not a word around it.
    opening = _OBJECT.match(req.text.lower())
    if opening is not None and opening.group(1) == name.lower():
        return False
    return strong_subject(ctx)


_OBJECT = re.compile(
    r"^\s*(?:please\s+)?[a-z]+\s+(?:me\s+|us\s+)?(?:a|an|some|the|my|our)\s+([a-z]+)"
)


def strong_subject(ctx: Ctx) -> bool:
    req = ctx.req
    if req.doc_ids or req.report is not None:
        return True
    if req.entity is not None and explicit(req.entity, norm(req.text)):
        return True
    return bool(metric_scores(ctx.catalog, req.text))


_NEAR = 55  # a record this close to a name not found is offered as what may have been meant


# What people call a country that its name does not start with.
_COUNTRY_WORDS = {"us": "united states", "usa": "united states", "u.s.": "united states",
                  "american": "united states", "america": "united states",
                  "uk": "united kingdom", "british": "united kingdom", "britain": "united kingdom"}  # fmt: skip
_COUNTRY_ARGS = {"fields": ["id", "country"], "limit": 50}


_DEMONYM = re.compile(r"^[A-Za-z][a-z]{3,}(?:ian|an|n|ese|ish)$")


def _country_alone(name: str) -> bool:
    """A country said on its own ("… past due, kenya", "US receivables"): a company's country
    before the first word of a party's name ("Kenya Wire & Cable"); by_country decides."""
    word = name.lower().strip(" .")
    return word in _COUNTRY_WORDS or word in _COUNTRIES


_COUNTRIES = frozenset(["kenya", "uganda", "tanzania", "rwanda", "nigeria", "ghana", "india",
    "canada", "germany", "france", "china", "japan", "mexico", "brazil", "australia",
    "ethiopia", "egypt", "zambia", "malawi", "south africa"])  # fmt: skip
# "The Kenya side", "our US operations": a country's company, not a record named after it.
_SIDE = re.compile(
    r"^\s*(?:(?:shillings?|dollars?|pounds?|euros?)\s+)?"
    r"(?:side|operations?|entity|business|arm|office|books|co\b\.?|company|firm)",
    re.I,
)


def _after(text: str, name: str) -> str:
    at = text.lower().find(name.lower())
    return text[at + len(name) :] if at >= 0 else ""


def _demonym(name: str, candidates: Sequence[tuple[float, int, str, str, str]]) -> bool:
    """A word like "Kenyan" that no record holds as a word of its name: the country's."""
    if not _DEMONYM.match(name):
        return False
    low = name.lower()
    return not any(low in re.findall(r"[a-z]+", c[4].lower()) for c in candidates)


def by_country(ctx: Ctx, name: str) -> tuple[str | None, Call | None]:
    """The one company the user can see in the country a word names ("Kenya", "Kenyan",
    "American"), or the look-up of the companies' countries still to make."""
    word = name.lower().strip(" .")
    if len(word) < 2 or " " in word or not ctx.has("company.list"):
        return None, None
    r = ctx.result("company.list", _COUNTRY_ARGS)
    if r is None:
        return None, Call("company.list", _COUNTRY_ARGS)
    wanted = _COUNTRY_WORDS.get(word)
    stems = [word] + [
        word[: -len(end)] for end in ("ian", "an", "n", "ese", "ish") if word.endswith(end)
    ]
    hits = {
        str(row["id"])
        for row in rows_of(r) if r.ok
        if row.get("id") and (country := str(row.get("country") or "").lower())
        and (country == wanted or any(len(st) >= 4 and country.startswith(st) for st in stems))
    }  # fmt: skip
    return (hits.pop() if len(hits) == 1 else None), None


def _not_found(
    catalog: Any, name: str, dims: Sequence[str], near: list[tuple[float, str, str]]
) -> str:
    """'I couldn't find <name> among customers, suppliers, items…', with the closest matches."""
    where = ", ".join(_plural(catalog, d) for d in dims[:6])
    text = (
        f"No records found: I couldn't find “{name}” among the {where} you can see, so I "
        "can't answer that and won't guess what it is."
    )
    closest = [f"{label} ({dim.replace('_', ' ')})" for _, dim, label in sorted(near, reverse=True)]
    if closest:
        text += " Closest matches: " + ", ".join(dict.fromkeys(closest[:3])) + "."
    return text + " Check the spelling or give its code."


def _plural(catalog: Any, dim: str) -> str:
    entity = catalog.entities.get(getattr(catalog.dimensions.get(dim), "entity", None) or dim)
    return str(entity.plural).lower() if entity is not None else dim.replace("_", " ")


def _values_call(ctx: Ctx, entity: str, dim_name: str, dim: Any) -> Call:
    path = dim.path_for(entity, ctx.catalog.entities[entity].fields) if dim else None
    args = {"measures": [{"func": "count"}], "group_by": [{"field": path or dim_name}]}
    return Call(f"{entity}.aggregate", args)


def _values(
    ctx: Ctx, entity: str, dim_name: str, dim: Any, name: str, order: int
) -> tuple[list[tuple[float, int, str, str, str]], Call | None]:
    """Candidates for ``name`` among the values of the field that carries ``dim_name`` on
    ``entity``'s records, or the call still to make (the values, or enabling their tool)."""
    if entity not in ctx.catalog.entities:
        return [], None
    if not ctx.has(f"{entity}.aggregate"):
        search = {"query": f"{entity.replace('_', ' ')} aggregate"}
        if ctx.has("tools.search") and ctx.result("tools.search", search) is None:
            return [], Call("tools.search", search)
        return [], None
    call = _values_call(ctx, entity, dim_name, dim)
    r = ctx.result(call.name, call.args)
    if r is None:
        return [], call
    if not r.ok:
        return [], None
    field = call.args["group_by"][0]["field"]
    out = []
    for row in rows_of(r):
        value = str(row.get(field) or "")
        score = match_score(name, {"id": value}, None) if value else 0.0
        if score >= ACCEPT:
            out.append((score, order, dim_name, value, value))
    return out, None


def _visible(ctx: Ctx, dim: Any) -> bool:
    """Whether the user may list the records a dimension names (its list tool was offered)."""
    entity = getattr(dim, "entity", None)
    return entity is None or ctx.has(f"{entity}.list")


def _enable_lists(ctx: Ctx, entities: Sequence[str]) -> Step | None:
    """Routing offers the tools the message's words name; the lists a name could be in are
    asked for by name (tools.search enables any the user is allowed)."""
    if not ctx.has("tools.search"):
        return None
    calls = []
    for entity_name in dict.fromkeys(e for e in entities if e in ctx.catalog.entities):
        if ctx.has(f"{entity_name}.list"):
            continue
        args = {"query": f"{entity_name.replace('_', ' ')} list"}
        if ctx.result("tools.search", args) is None:
            calls.append(Call("tools.search", args))
    return Step(calls=calls) if calls else None


def ask_which(
    ctx: Ctx, name: str, dim: str, options: list[tuple[float, int, str, str, str]]
) -> Step:
    label = dim.replace("_", " ")
    question = f"Which {label} do you mean by “{name}”?"
    choices = [{"label": o[4] if o[4] == o[3] else f"{o[4]} ({o[3]})", "value": o[3]}
               for o in options[:8]]  # fmt: skip
    if ctx.has("display.choices") and ctx.result("display.choices") is None:
        # The slot names the dimension and the words asked about, so the reply replaces them.
        slot = f"name:{dim}:{name}"[:60]
        return call("display.choices", {"question": question, "options": choices, "slot": slot})
    return say(question + " " + ", ".join(c["label"] for c in choices) + ".")


def named_whole(
    ctx: Ctx, dimensions: Sequence[str], resolved: Mapping[str, tuple[str, str]]
) -> tuple[dict[str, tuple[str, str]], Step | None]:
    """Records of a few-valued dimension the text names by their whole name ("annual leave":
    the Leave Type Annual Leave), or by a one-word name with the dimension's own word ("the
    warehouse dept"): name → (dimension, id); or the step that lists them."""
    catalog, low = ctx.catalog, f" {norm(ctx.req.text)} "
    dims = getattr(catalog, "dimensions", {}) or {}
    held = {d for d, _ in resolved.values()}
    found: dict[str, tuple[str, str]] = {}
    pending: list[Call] = []
    segments = ctx.req.text.split(" ; ")
    newest = norm(segments[-1]).strip() if len(segments) > 1 else ""
    for name in dimensions:
        dim = dims.get(name)
        entity = catalog.entities.get(getattr(dim, "entity", None) or "")
        if dim is None or not dim.named_whole or name in held or entity is None:
            continue
        if not ctx.has(f"{entity.name}.list"):
            continue
        title = entity.title_field.name if entity.title_field is not None else "id"
        args = {"fields": list(dict.fromkeys(["id", title])), "limit": 100}
        r = ctx.result(f"{entity.name}.list", args)
        if r is None:
            pending.append(Call(f"{entity.name}.list", args))
            continue
        words = [norm(w).strip() for w in (dim.label, *dim.synonyms)]
        for row in rows_of(r) if r.ok else []:
            said = norm(str(row.get(title) or row.get("id") or "")).strip()
            # "Paid by cheque", "via M-Pesa": one word after the way it went is the record.
            by = re.search(rf" (?:by|via|through|using|in) {re.escape(said)} ", low) is not None
            whole = (len(said.split()) > 1 or by) and has_term(low, said)
            # "mpesa collections": a name of several parts typed as one word (M-Pesa).
            squashed = _squashed(said)
            whole = whole or (len(said.split()) > 1 and len(squashed) >= 4
                              and f" {squashed} " in low)  # fmt: skip
            beside = any(f" {said} {w} " in low or f" {w} {said} " in low for w in words)
            # "Sick days", "annual days off": the words that tell it from the others of its
            # kind ("sick" of Sick Leave), said of days.
            own = " ".join(w for w in said.split() if not any(w in x.split() for x in words))
            of_days = (
                bool(own)
                and own != said
                and re.search(rf" {re.escape(own)} (?:days?|time off|days? off) ", low) is not None
            )
            # "And casual?" after a leave figure: that word alone, in a short follow-up.
            alone = (
                bool(own)
                and own != said
                and len(own) >= 4
                and len(newest.split()) <= 5
                and f" {own} " in f" {newest} "
            )
            if said and (whole or beside or of_days or alone):
                found[f"{said} ({row.get('id')})"] = (name, str(row.get("id")))
    return found, (Step(calls=pending) if pending else None)
