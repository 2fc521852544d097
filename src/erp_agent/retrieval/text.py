"""Keyword text helpers shared by both index backends: identifier tokens and query terms."""

from __future__ import annotations

import re

# Document ids such as ACC-SINV-2026-00123, SAL-ORD-2026-00012 or HR-EMP-00042: letters and
# digits joined by - / . with at least one digit. Tokenisers split them into common parts
# ("acc", "2026"); their compact form ("accsinv202600123") is one rare, exact token.
_IDENTIFIER = re.compile(r"\b[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)+\b")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "show",
        "tell",
        "that",
        "the",
        "their",
        "there",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def identifier_tokens(text: str) -> list[str]:
    """Compact lower-case forms of the document ids in ``text``, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in _IDENTIFIER.finditer(text):
        token = match.group()
        if any(c.isdigit() for c in token):
            seen[re.sub(r"[-/.]", "", token).lower()] = None
    return list(seen)


def query_terms(text: str) -> list[str]:
    """Lower-case words of a query, stopwords dropped (unless nothing else is left)."""
    words = [w.lower() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOPWORDS]
    return list(dict.fromkeys(kept or words))


def identifier_parts(text: str) -> set[str]:
    """Lower-case pieces of the ids in ``text`` ("acc", "sinv", "2026", "00123"): alone they
    match every document of the series, so an OR over them is noise."""
    parts: set[str] = set()
    for match in _IDENTIFIER.finditer(text):
        if any(c.isdigit() for c in match.group()):
            parts.update(w.lower() for w in _WORD.findall(match.group()))
    return parts
