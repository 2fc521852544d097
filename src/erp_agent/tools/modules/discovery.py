"""tools.search: the model finds any permitted tool by describing what it needs.

Tools are ranked by meaning, with the hybrid retrieval the search index uses: a dense leg
(the embedder's cosine between the request and each tool's name and first sentence) and a
keyword leg (BM25 over the tool's name and description), fused by reciprocal rank. Only tools
past a threshold on either leg are returned — a salary-slip request enables the salary-slip
tools, never the sales tools that share a word with it ("by", "total"). A request that names a
tool ("customer list", "analytics.trend") returns that tool first. The engine appends what it
returns to the conversation's tools.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from erp_agent.catalog.questions import load_questions
from erp_agent.retrieval.hybrid import fuse
from erp_agent.tools.base import Args, Effect, Shape, Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:
    from erp_agent.retrieval.embeddings import Embedder, Vectors

_WORD = re.compile(r"[a-z0-9]+")
MAX_HITS = 4
DENSE_MIN = 0.5  # cosine (MiniLM) of a tool that does what the request says
KEYWORD_MIN = 0.6  # share of the request's term weight (BM25 idf) a tool's text must hold
# Words that say nothing about which tool: they never make a tool match.
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "by",
        "with",
        "from",
        "at",
        "as",
        "is",
        "are",
        "be",
        "what",
        "which",
        "who",
        "how",
        "me",
        "my",
        "our",
        "we",
        "i",
        "it",
        "this",
        "that",
        "these",
        "those",
        "all",
        "any",
        "each",
        "per",
        "show",
        "give",
        "get",
        "find",
        "tool",
        "tools",
        "need",
        "want",
        "please",
        "can",
        "do",
        "does",
        "list",
    ]
)


def _words(text: str) -> list[str]:
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(text.lower())]


def _name_words(name: str) -> list[str]:
    return _words(name.replace("_", " ").replace(".", " "))


def _first_sentence(text: str) -> str:
    end = re.search(r"(?<!e\.g)(?<!i\.e)\.\s", text)
    return text[: end.start() + 1] if end else text


class ToolIndex:
    """The registry's tools, searchable by meaning. Tool vectors are made once, at the first
    search that needs them (the embedder is the search index's, offline by default)."""

    def __init__(self, registry: ToolRegistry, embedder: Embedder | None = None) -> None:
        self.registry = registry
        self.embedder = embedder
        self._names: list[str] = []
        self._terms: list[Counter[str]] = []
        self._idf: dict[str, float] = {}
        self._avg = 1.0
        self._vectors: Vectors | None = None
        self._lock = threading.Lock()

    def _build(self) -> None:
        if self._names:
            return
        tools = [t for t in self.registry if t.name != "tools.search"]
        self._names = [t.name for t in tools]
        # The name counts twice: "salary slip aggregate" is mostly what the tool is.
        self._terms = [
            Counter(w for w in [*_name_words(t.name) * 2, *_words(t.description)] if w not in _STOP)
            for t in tools
        ]
        df: Counter[str] = Counter(w for terms in self._terms for w in terms)
        n = len(self._terms)
        self._idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self._avg = sum(sum(t.values()) for t in self._terms) / max(n, 1)

    def _dense(self) -> Vectors | None:
        if self.embedder is None:
            return None
        with self._lock:
            if self._vectors is None:
                texts = [
                    f"{' '.join(_name_words(name))}: {_first_sentence(tool.description)}"
                    for name in self._names
                    if (tool := self.registry.get(name)) is not None
                ]
                self._vectors = self.embedder.embed(texts)
            return self._vectors

    def named(self, query: str, allowed: frozenset[str]) -> list[str]:
        """Tools the request names: by name ("analytics.trend") or by every word of the name,
        the record and the action ("customer list", "list items by name")."""
        self._build()
        text = query.lower()
        words = set(_words(query)) - {"a", "an", "the", "of", "for", "me", "please"}
        exact = [n for n in self._names if n in allowed and n in text]
        whole = [
            n
            for n in self._names
            if n in allowed
            and n not in exact
            and "." in n
            and len(_name_words(n)) >= 2
            and set(_name_words(n)) <= words
        ]
        whole.sort(key=lambda n: -len(_name_words(n)))  # "purchase order list" before "list"
        return [*exact, *whole]

    def rank(self, query: str, allowed: frozenset[str]) -> list[str]:
        """Permitted tools whose description matches the request's meaning, best first."""
        self._build()
        terms = [w for w in _words(query) if w not in _STOP and w in self._idf]
        keyword: list[tuple[str, float]] = []
        passed: set[str] = set()
        wanted = sum(self._idf[w] for w in set(terms)) or 1.0
        for name, counts in zip(self._names, self._terms, strict=True):
            if name not in allowed:
                continue
            held = [w for w in set(terms) if counts[w]]
            if not held:
                continue
            length = sum(counts.values())
            score = sum(
                self._idf[w]
                * counts[w]
                * 2.2
                / (counts[w] + 1.2 * (0.25 + 0.75 * length / self._avg))
                for w in held
            )
            keyword.append((name, score))
            if sum(self._idf[w] for w in held) / wanted >= KEYWORD_MIN:
                passed.add(name)
        keyword.sort(key=lambda item: -item[1])
        legs: list[list[tuple[str, float]]] = [keyword]
        vectors = self._dense() if query.strip() else None
        if vectors is not None and self.embedder is not None:
            sims = vectors @ self.embedder.embed_one(query)
            dense = sorted(
                ((n, float(s)) for n, s in zip(self._names, sims, strict=True) if n in allowed),
                key=lambda item: -item[1],
            )
            legs.append(dense)
            passed |= {n for n, s in dense if s >= DENSE_MIN}
            # Words alone pass a tool only if its meaning is not far off.
            far = {n for n, s in dense if s < DENSE_MIN / 2}
            passed -= far
        changes = _changes_asked(query)
        return [
            name for name, _ in fuse(legs) if name in passed and self._read_or_asked(name, changes)
        ]

    def _read_or_asked(self, name: str, changes: set[str]) -> bool:
        """A write tool only for a request that asks for that change ("approve", "create")."""
        tool = self.registry.get(name)
        if tool is None or tool.effect is Effect.READ:
            return True
        action = tool.action.removeprefix("workflow_")
        return action in changes or (action == "action" and bool({"approve", "reject"} & changes))


def _changes_asked(query: str) -> set[str]:
    """The changes a request asks for, by the question kinds' verbs (create, update, …)."""
    words = set(_WORD.findall(query.lower()))
    text = f" {' '.join(_WORD.findall(query.lower()))} "
    return {
        change
        for change, verbs in load_questions().verbs.items()
        if any((v in words) if " " not in v else (f" {v} " in text) for v in verbs)
    }


def search_tool(registry: ToolRegistry, embedder: Embedder | None = None) -> Tool:
    index = ToolIndex(registry, embedder)

    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        import asyncio

        query = str(args["query"])
        allowed = frozenset(n for n in ctx.session.allowed_tools if n != "tools.search")
        # A tool asked for by name is what is wanted: nothing else is appended with it.
        found = index.named(query, allowed) or await asyncio.to_thread(index.rank, query, allowed)
        hits = [_hit(registry, n) for n in found[:MAX_HITS]]
        return {
            "tools": hits,
            "note": "These tools are now available for the rest of this conversation."
            if hits
            else "No permitted tool does that; say what you cannot do.",
        }

    return Tool(
        "tools.search",
        "Find a tool you were not given: describe what you need (e.g. 'expense claims by "
        "employee', 'approve purchase order'). Returns the permitted tools that do it, and "
        "enables them.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 2, "maxLength": 200}},
            "required": ["query"],
            "additionalProperties": False,
        },
        Effect.READ,
        "tools",
        run=run,
        action="search",
        shape=Shape.TOOL_SEARCH,
    )


def _hit(registry: ToolRegistry, name: str) -> dict[str, str]:
    tool = registry.get(name)
    return {"name": name, "description": _first_sentence(tool.description if tool else "")}


__all__: Sequence[str] = ("ToolIndex", "search_tool")
