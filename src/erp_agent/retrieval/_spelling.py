"""Query words the embedded index has never seen: a misspelled one is replaced by the closest
word the index does hold (one slip for short words, two for long ones), so "Lakesiide Hardware"
still finds Lakeside Hardware's cards by keyword; one with no close match is dropped, because no
document can hold it and an AND over it would match nothing ("the invoice we SENT to ...").

Words are compared as FTS5 stores them (Porter stems): a TEMP FTS5 table stems the query word,
and the index's own vocabulary (``fts5vocab``) is read only around the word's first letters.
"""

from __future__ import annotations

import sqlite3

MIN_LENGTH = 5  # shorter words are too ambiguous to correct
_VOCAB = "CREATE VIRTUAL TABLE IF NOT EXISTS docs_vocab USING fts5vocab(docs_fts, 'row')"
_PROBE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.stem_probe USING fts5(t, tokenize = 'porter unicode61');"
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.stem_probe_vocab USING fts5vocab(temp, stem_probe, 'row');"
)


def distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap neighbours), or
    ``limit + 1`` as soon as it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return prev[-1]


class Speller:
    """Corrections cached until the index changes (``version``)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.execute(_VOCAB)
        db.executescript(_PROBE)
        self._version: object = None
        self._cache: dict[str, str | None] = {}

    def stem(self, word: str) -> str | None:
        db = self._db
        db.execute("INSERT INTO temp.stem_probe (t) VALUES (?)", (word,))
        row = db.execute("SELECT term FROM temp.stem_probe_vocab LIMIT 1").fetchone()
        db.execute("DELETE FROM temp.stem_probe")
        return str(row[0]) if row else None

    def correct(self, words: list[str], version: object) -> dict[str, str | None]:
        """Each word -> itself when the index holds it, its closest known stem when it is a
        slip, None when no document can match it."""
        if version != self._version:
            self._version, self._cache = version, {}
        for word in words:
            if word not in self._cache:
                self._cache[word] = self._known_or_closest(word)
        return {word: self._cache[word] for word in words}

    def _known_or_closest(self, word: str) -> str | None:
        stem = self.stem(word)
        if stem is None:
            return None  # nothing the tokeniser keeps
        if self._db.execute("SELECT 1 FROM docs_vocab WHERE term = ?", (stem,)).fetchone():
            return word
        if len(word) < MIN_LENGTH or not word.isalpha():
            return None
        return self._closest(stem)

    def _closest(self, stem: str) -> str | None:
        db = self._db
        limit = 1 if len(stem) < 8 else 2
        best: tuple[int, int, str] | None = None
        # A slip rarely hits the first letter; the second may be dropped or swapped.
        for prefix in dict.fromkeys([stem[:2], stem[0] + stem[2:3]]):
            rows = db.execute(
                "SELECT term, doc FROM docs_vocab WHERE term >= ? AND term < ?",
                (prefix, prefix + "\uffff"),
            )
            for term, docs in rows:
                if not term.isalpha():
                    continue
                d = distance(stem, term, limit)
                if d <= limit and (best is None or (d, -docs) < (best[0], -best[1])):
                    best = (d, docs, term)
        return best[2] if best else None
