"""Markdown knowledge documents -> labelled chunks.

A document has YAML front matter (title, module, entities) and is cut at ``##`` headings; a
section longer than ``max_words`` is split into overlapping windows so no passage exceeds what
the embedder reads (256 tokens) by much, and a sentence cut at a window edge still appears whole
in the neighbour.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from erp_agent.errors import ConfigError

MAX_WORDS = 160  # ~210 MiniLM tokens, under the model's 256
OVERLAP_WORDS = 30
CHUNKER_VERSION = "1"  # bump when chunking changes, so every document is re-indexed

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_H2 = re.compile(r"^##\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass
class KnowledgeDoc:
    """A parsed knowledge document."""

    doc_id: str  # stable id: the path relative to the knowledge root, without suffix
    title: str
    body: str
    module: str | None = None
    entities: tuple[str, ...] = ()
    checksum: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chunk:
    doc_id: str
    index: int
    section: str
    label: str  # "title > section": what a citation shows
    text: str


def parse(doc_id: str, source: str) -> KnowledgeDoc:
    """Split front matter from the body; the title falls back to the first ``#`` heading."""
    meta: dict[str, Any] = {}
    body = source
    match = _FRONT.match(source)
    if match:
        loaded = yaml.safe_load(match.group(1)) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"knowledge document {doc_id}: front matter must be a mapping")
        meta, body = loaded, source[match.end() :]
    heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
    title = str(meta.pop("title", "") or (heading.group(1) if heading else doc_id))
    entities = meta.pop("entities", None) or meta.pop("doctypes", None) or ()
    if isinstance(entities, str):
        entities = [entities]
    module = meta.pop("module", None)
    checksum = hashlib.sha256(f"{CHUNKER_VERSION}\n{source}".encode()).hexdigest()
    return KnowledgeDoc(
        doc_id=doc_id,
        title=title.strip(),
        body=body,
        module=str(module) if module else None,
        entities=tuple(str(e) for e in entities),
        checksum=checksum,
        extra=meta,
    )


def chunk(
    doc: KnowledgeDoc, *, max_words: int = MAX_WORDS, overlap: int = OVERLAP_WORDS
) -> list[Chunk]:
    """Chunks of a document in reading order; text before the first ``##`` is "Overview"."""
    sections: list[tuple[str, str]] = []
    cuts = list(_H2.finditer(doc.body))
    intro = doc.body[: cuts[0].start()] if cuts else doc.body
    intro = re.sub(r"^#\s+.+$", "", intro, count=1, flags=re.MULTILINE).strip()
    if intro:
        sections.append(("Overview", intro))
    for i, cut in enumerate(cuts):
        end = cuts[i + 1].start() if i + 1 < len(cuts) else len(doc.body)
        text = doc.body[cut.end() : end].strip()
        if text:
            sections.append((cut.group(1).strip(), text))
    chunks: list[Chunk] = []
    for section, text in sections:
        label = f"{doc.title} > {section}"
        for part in _windows(text, max_words, overlap):
            chunks.append(Chunk(doc.doc_id, len(chunks), section, label, part))
    return chunks


def _windows(text: str, max_words: int, overlap: int) -> list[str]:
    """``text`` whole if short enough, else windows of ``max_words`` words sharing ``overlap``."""
    words = text.split()
    if len(words) <= max_words:
        return [text]
    step = max(1, max_words - overlap)
    parts: list[str] = []
    for start in range(0, len(words), step):
        parts.append(" ".join(words[start : start + max_words]))
        if start + max_words >= len(words):
            break
    return parts
