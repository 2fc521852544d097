"""The layered system prompt, stable bytes first so providers can cache the prefix.

Two system messages. The first holds what is the same for every request of the deployment:
core rules, then the site's own sections. Chat templates of self-hosted models (Qwen2.5,
Hermes) render the tools array right after it, before everything else. The second is the
session block (date, user, roles, the data scope the ERP applies to this user): the same for
every request of a conversation. Nothing in either depends on the tools offered: each tool's
rules travel in its own description, so a tool appended to the conversation's tools array
changes nothing before it, and a follow-up's request begins with the previous one.

What a turn adds about its business modules (what "revenue" means in selling, how stock is
counted) goes in that turn's context message (``module_notes``), after the history.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from erp_agent.calls.session import Session
from erp_agent.errors import ConfigError
from erp_agent.models.base import Message


@cache
def prompt_file(name: str) -> str:
    """A prompt text shipped in ``engine/prompts`` ('' if the file does not exist)."""
    path = resources.files("erp_agent.engine") / "prompts" / name
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


CONTEXT_OPEN = "<erp_agent_context>"


def context_message(context: str) -> Message | None:
    """The context tier as a user-role message inside clear delimiters: knowledge passages and
    record text are content the user did not write, so they never reach the system role.

    A turn's context message is kept in the conversation's history where it was sent, just
    before that turn's request, so the next turn's prompt begins with this turn's byte for byte
    (a server's prefix cache holds); each turn adds its own after the history. Readers of the
    context (the offline planner) read the running turn's, just before its request; trimming
    drops older ones first, and a turn whose tools or system messages changed leaves them out
    (``Engine._keep_earlier_context``)."""
    if not context:
        return None
    safe = context.replace(CONTEXT_OPEN, "").replace("</erp_agent_context>", "")
    return Message("user", prompt_file("context.md").replace("{context}", safe))


def is_context(message: Message) -> bool:
    """A context message (this turn's or, in the history, an earlier turn's)."""
    return message.role == "user" and (message.content or "").startswith(CONTEXT_OPEN)


@dataclass(frozen=True)
class PromptParts:
    stable: str  # core + site sections: identical for every request of the deployment
    session: str  # who asks, when, and what the ERP lets them see: the same for a conversation

    @property
    def text(self) -> str:
        return "\n\n".join(p for p in (self.stable, self.session) if p)


def scope_text(restrictions: Iterable[tuple[str, Sequence[str]]]) -> str:
    """The user's data scope in words ('' for none): "Branch Kisumu; Company Savanna …"."""
    return "; ".join(f"{what} {', '.join(values)}" for what, values in restrictions if values)


def session_block(
    session: Session, today: dt.date, scope: Iterable[tuple[str, Sequence[str]]] = ()
) -> str:
    lines = [
        "Session:",
        f"- Today: {today.isoformat()} ({today:%A})",
        f"- User: {session.user}",
        f"- Roles: {', '.join(sorted(r for r in session.roles if r not in ('All', 'Guest', 'Desk User')))}",
    ]
    if session.company:
        lines.append(f"- Company: {session.company}")
    elif session.default_company:
        lines.append(f"- Default company: {session.default_company}")
    if session.currency:
        lines.append(f"- Currency: {session.currency}")
    lines.append(f"- Timezone: {session.timezone}")
    restricted = scope_text(scope)
    if restricted:
        lines.append(
            f"- Restricted by the user's ERP permissions to {restricted}: records outside it are "
            "not visible to them, so an empty result means none within it, not none at all."
        )
    if session.read_only:
        lines.append("- This workspace is read-only: you cannot prepare changes.")
    return "\n".join(lines)


def build(
    session: Session,
    today: dt.date,
    site: str = "",
    scope: Iterable[tuple[str, Sequence[str]]] = (),
) -> PromptParts:
    """The prompt. ``site`` is the deployment's own sections (ERP_AGENT_SITE_DIR/prompts),
    after the packaged ones: they add to the rules, and cannot lift the gateway's checks,
    which are not prompts. ``scope``: the restrictions the ERP applies to the user's reads."""
    stable = [prompt_file("core.md"), site]
    return PromptParts("\n\n".join(p for p in stable if p), session_block(session, today, scope))


def module_notes(modules: Iterable[str]) -> str:
    """What the modules a turn is about mean by their words, for its context message."""
    notes = [prompt_file(f"modules/{module}.md") for module in dict.fromkeys(modules)]
    return "\n".join(" ".join(n.split()) for n in notes if n)


MAX_SITE_PROMPT_CHARS = 8000  # the site's sections are sent with every model call


def site_sections(site_dir: str | Path | None) -> str:
    """``<site>/prompts/*.md`` in name order, checked at start (ConfigError naming the file)."""
    if not site_dir:
        return ""
    folder = Path(site_dir) / "prompts"
    if not folder.is_dir():
        return ""
    texts = []
    for path in sorted(folder.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8").strip()
        except UnicodeDecodeError as exc:
            raise ConfigError(f"Site prompt section {path.name} is not UTF-8 text.") from exc
        if not text:
            raise ConfigError(f"Site prompt section {path.name} is empty; remove it or fill it.")
        texts.append(text)
    joined = "\n\n".join(texts)
    if len(joined) > MAX_SITE_PROMPT_CHARS:
        raise ConfigError(
            f"The site prompt sections in {folder} have {len(joined)} characters; at most "
            f"{MAX_SITE_PROMPT_CHARS} are sent with every question. Shorten them."
        )
    return joined
