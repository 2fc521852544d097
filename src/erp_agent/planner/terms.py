"""Terms in a request: normalised words and whether a catalog phrase is said (its plural too)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from erp_agent.catalog import Catalog, Entity

_NORM_WORD = re.compile(r"[a-z0-9&][a-z0-9&\-']*")
# Adverbs said inside a catalog phrase ("what we still owe", "who currently owes us", "how
# many days do I still have") that change nothing the phrase means.
FILLERS = re.compile(r"\b(still|currently|actually|really|presently)\b", re.IGNORECASE)
# Within a figure's name, "any" fills too ("behind on any payments" is behind on payments).
TERM_FILLERS = re.compile(r"\b(still|currently|actually|really|presently|any)\b", re.IGNORECASE)


class CatalogKey:
    """A catalog as a cache key, by identity (a frozen model with dict fields has no hash): what
    the planner derives from the catalog once, with ``functools.lru_cache``. The key holds the
    catalog, so its id is never reused while cached."""

    __slots__ = ("catalog",)

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __hash__(self) -> int:
        return id(self.catalog)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CatalogKey) and other.catalog is self.catalog


@functools.lru_cache(maxsize=65536)
def norm(text: str) -> str:
    # Cached: the planner compares every catalog term with the text many times per request.
    return " " + " ".join(_NORM_WORD.findall(text.lower())) + " "


def has_term(haystack: str, phrase: str) -> bool:
    p = norm(phrase).strip()
    if not p:
        return False
    if f" {p} " in haystack:
        return True
    # A plural in the text for a singular term ("invoice" → "invoices"); never the other way
    # round, which turns "goods" into "good".
    return any(f" {p}{end} " in haystack for end in ("s", "es"))


def has_verb_form(haystack: str, phrase: str) -> bool:
    """'invoiced', 'billed': weaker evidence than the noun ("projected" is not a project)."""
    p = norm(phrase).strip()
    return bool(p) and any(f" {p}{end} " in haystack for end in ("d", "ed"))


def explicit(entity: Entity, haystack: str) -> bool:
    """Whether the request names the entity by its label or plural (not just a loose keyword)."""
    return any(has_term(haystack, t) for t in (entity.label, entity.plural, *entity.synonyms))


def message_saying(segments: Sequence[str], name: str) -> int:
    """The index of the newest message (lowercased) that says ``name``; 0 when none does. A
    name found again in another record ("sick leave (Sick Leave)") is the words said."""
    words = name.split(" (")[0].lower().split()
    # A record found from fewer words than its name ("harbor goods" of Harbor Goods Inc): the
    # longest start of its name a message says.
    for size in range(len(words), 0, -1):
        said = " ".join(words[:size])
        if size < len(words) and len(said) < 4:
            break
        at = [i for i, seg in enumerate(segments) if said in seg]
        if at:
            return max(at)
    return 0
