"""The wording of standing requests, for the offline planner (and any caller that reads text):
``read_standing_request`` splits "send me this every Monday at 8" / "tell me when stock of X
falls below 50" / "alert me when an invoice over 1M is overdue" into the schedule or condition
and the question left to read into tool calls; ``read_management`` reads "what am I
subscribed to?", "stop the Monday digest", "resume …", "delete …"; ``create_arguments`` makes
``subscriptions.create``'s arguments from a reading the planner made.

Meaning that is not a subscription ("stop", "every customer") returns None: the planner then
reads the message as it would have anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from erp_agent.subscriptions.models import Call, Condition
from erp_agent.subscriptions.schedule import parse_when

_ASK = r"(?:send|email|mail|give|show|tell|notify|alert|warn|remind|message|ping|let)\s+(?:me|us)(?:\s+know)?"
_DIGEST = re.compile(
    rf"^\s*(?:please\s+|can you\s+|could you\s+)?{_ASK}\s+(?P<what>.*?)\s*"
    r"(?P<when>\b(?:every|each|daily|weekly|monthly|hourly|on\s+(?:mon|tue|wed|thu|fri|sat|sun)).*)$",
    re.I,
)
_ALERT = re.compile(
    rf"^\s*(?:please\s+|can you\s+|could you\s+)?{_ASK}(?:\s+(?:by|via|in|on)\s+(?:the\s+)?[\w-]+)?\s+(?:when|if|whenever|as soon as|once)\s+(?P<clause>.+?)[.?!]*\s*$",
    re.I,
)
_NUMBER = r"(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>k|m|mn|million|thousand|bn|billion)?\b"
_BELOW = re.compile(
    rf"\b(?:falls?|drops?|go(?:es)?|gets?|is|are|dips?|sinks?)\s+(?:below|under|beneath|less than)\s+{_NUMBER}",
    re.I,
)
_ABOVE = re.compile(
    rf"\b(?:rises?|go(?:es)?|gets?|is|are|climbs?|exceeds?|pass(?:es)?|tops?)\s+"
    rf"(?:above|over|more than|beyond|past)?\s*{_NUMBER}",
    re.I,
)
_EVENT = re.compile(
    r"\b(?:is|are|becomes?|gets?|goes)\s+(?P<state>overdue|late|past due|unpaid|out of stock|due)\b",
    re.I,
)
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}
_CHANNELS = {
    "email": re.compile(r"\b(e-?mail|mail)\b", re.I),
    "erp": re.compile(r"\b(in|on)\s+(the\s+)?(erp|erpnext|to-?do|notifications?)\b", re.I),
    "inbox": re.compile(r"\binbox\b", re.I),
}
_LIST = re.compile(
    r"\b(what|which)\b.*\b(am i|are we|i'?m|we're)\s+(subscribed|signed up|getting)\b"
    r"|\b(my|list|show)\b.*\b(subscriptions|alerts|digests)\b",
    re.I,
)
_MANAGE = re.compile(
    r"^\s*(?:please\s+)?(?P<verb>stop|pause|mute|cancel|unsubscribe(?:\s+me)?\s+from|resume|restart|"
    r"delete|remove|turn\s+off|turn\s+on)\s+(?P<what>.+?)[.?!]*\s*$",
    re.I,
)
_SUBSCRIPTION_WORDS = re.compile(
    r"\b(digest|alert|subscription|report|reminder|email|notification|every|daily|weekly|monthly)\b",
    re.I,
)


def number(text: str, unit: str | None) -> float:
    value = float(text.replace(",", ""))
    return value * _SCALE.get((unit or "").lower(), 1.0)


@dataclass(frozen=True)
class StandingRequest:
    kind: Literal["digest", "alert"]
    question: str  # what to read into tool calls; "this" means the conversation's last figure
    schedule: str | None = None  # cron; None for an alert: the alert schedule setting
    condition: Condition | None = None
    channels: tuple[str, ...] = ()  # what the user named ("email me"); () the default

    @property
    def refers_back(self) -> bool:
        """The question is the last figure shown ("send me this every Monday")."""
        return self.question.strip().lower() in (
            "",
            "this",
            "that",
            "it",
            "these",
            "those",
            "the same",
            "this report",
            "this figure",
        )


def _channels(text: str) -> tuple[str, ...]:
    return tuple(name for name, pattern in _CHANNELS.items() if pattern.search(text))


def read_standing_request(text: str) -> StandingRequest | None:
    """The standing request in ``text``, or None when it asks for no digest or alert."""
    alert = _ALERT.match(text)
    if alert is not None:
        clause = alert["clause"]
        schedule = (
            parse_when(clause)
            if re.search(r"\b(every|each|daily|hourly)\b", clause, re.I)
            else None
        )
        for pattern, op in ((_BELOW, "<"), (_ABOVE, ">")):
            found = pattern.search(clause)
            if found is not None:
                question = clause[: found.start()].strip(" ,")
                condition: Condition = {"on": "value", "op": op,
                                        "value": number(found["num"], found["unit"])}  # fmt: skip
                return StandingRequest("alert", question, schedule, condition, _channels(text))
        event = _EVENT.search(clause)
        if event is not None:
            subject = clause[: event.start()].strip(" ,")
            subject = re.sub(r"^(an?|any|the)\s+", "", subject, flags=re.I)
            question = f"{event['state']} {subject}".strip()
            condition = {"on": "value", "op": ">", "value": 0}
            return StandingRequest("alert", question, schedule, condition, _channels(text))
        return None
    digest = _DIGEST.match(text)
    if digest is not None:
        schedule = parse_when(digest["when"])
        if schedule is None:
            return None
        what = re.sub(
            r"^(?:by\s+e-?mail\s+|an?\s+e-?mail\s+(?:with|of)\s+)", "", digest["what"], flags=re.I
        )
        return StandingRequest("digest", what.strip(" ,"), schedule, None, _channels(text))
    return None


@dataclass(frozen=True)
class Management:
    action: Literal["list", "pause", "resume", "delete"]
    subscription: str = ""  # words naming it ("the Monday digest"); "" for list


def read_management(text: str) -> Management | None:
    """A request about the user's subscriptions, or None."""
    if _LIST.search(text):
        return Management("list")
    found = _MANAGE.match(text)
    if found is None or not _SUBSCRIPTION_WORDS.search(found["what"]):
        return None
    verb = found["verb"].lower()
    action: Literal["pause", "resume", "delete"]
    if verb in ("resume", "restart", "turn on"):
        action = "resume"
    elif verb in ("delete", "remove") or verb.startswith("unsubscribe"):
        action = "delete"
    else:
        action = "pause"
    return Management(action, found["what"].strip())


def create_arguments(
    request: StandingRequest,
    calls: list[Call],
    *,
    question: str,
    title: str | None = None,
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """``subscriptions.create``'s arguments for a request read into ``calls``."""
    args: dict[str, Any] = {"title": title or question[:80], "question": question, "calls": calls}
    if request.schedule:
        args["schedule"] = request.schedule
    if request.condition:
        args["condition"] = dict(request.condition)
    if request.channels:
        args["channels"] = list(request.channels)
    if conversation_id:
        args["conversation_id"] = conversation_id
    return args
