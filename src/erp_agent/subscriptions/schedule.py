"""Schedules: five-field cron in the user's time zone (cronsim: small, typed, DST-correct),
the next run after a moment, the schedule in words, and everyday phrases read as cron
("every Monday at 8" → ``0 8 * * 1``)."""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from cronsim import CronSim, CronSimError

from erp_agent.errors import ToolInputError

_DAYS = {
    "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6,
    "sunday": 0, "mon": 1, "tue": 2, "tues": 2, "wed": 3, "thu": 4, "thur": 4, "thurs": 4,
    "fri": 5, "sat": 6, "sun": 0,
}  # fmt: skip
_DAY = "|".join(sorted(_DAYS, key=len, reverse=True))
_TIME = re.compile(
    r"\b(?:at\s+)?(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s*(?P<ampm>am|pm|a\.m\.|p\.m\.)?"
    r"(?:\s*o'?clock)?\b"
)
_NAMED_TIMES = {"morning": (8, 0), "noon": (12, 0), "midday": (12, 0), "evening": (18, 0),
                "night": (20, 0), "midnight": (0, 0)}  # fmt: skip


def zone(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ToolInputError(f"{name!r} is not a time zone (e.g. Africa/Nairobi, UTC)") from None


def validate(cron: str) -> str:
    """The cron expression, checked; a ToolInputError the model can correct otherwise."""
    expression = " ".join(cron.split())
    if len(expression.split(" ")) != 5:
        raise ToolInputError(
            f"schedule {cron!r} must be cron with five fields (minute hour day month weekday), "
            "e.g. '0 8 * * 1' for Mondays at 08:00"
        )
    try:
        CronSim(expression, dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    except CronSimError as exc:
        raise ToolInputError(f"schedule {cron!r} is not valid cron: {exc}") from None
    return expression


def next_run(cron: str, timezone: str, after: dt.datetime) -> dt.datetime:
    """The first time strictly after ``after`` that ``cron`` names in ``timezone``, in UTC."""
    local = after.astimezone(zone(timezone)).replace(second=0, microsecond=0)
    found = next(CronSim(cron, local))
    return found.astimezone(dt.UTC)


def in_words(cron: str, timezone: str = "UTC") -> str:
    try:
        words = CronSim(cron, dt.datetime(2000, 1, 1, tzinfo=dt.UTC)).explain()
    except (CronSimError, ValueError):
        words = cron
    return f"{words} ({timezone})" if timezone and timezone != "UTC" else f"{words} (UTC)"


def _time(text: str) -> tuple[int, int] | None:
    for word, at in _NAMED_TIMES.items():
        if re.search(rf"\b{word}\b", text):
            return at
    for match in _TIME.finditer(text):
        hour, minute = int(match["h"]), int(match["m"] or 0)
        ampm = (match["ampm"] or "").replace(".", "")
        if not match["m"] and not ampm and "at" not in match.group(0):
            continue  # a bare number ("the 1st", "top 5") is no time of day
        if ampm == "pm" and hour < 12:
            hour += 12
        if ampm == "am" and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            return hour, minute
    return None


def parse_when(text: str) -> str | None:
    """Cron for an everyday schedule phrase, or None when the text names none.

    "every Monday at 8" → 0 8 * * 1; "daily at 7:30" → 30 7 * * *; "every weekday morning"
    → 0 8 * * 1-5; "every month on the 1st" → 0 8 1 * *; "every hour" → 0 * * * *.
    A time of day not said is 08:00."""
    lower = text.lower()
    hour, minute = _time(lower) or (8, 0)
    if re.search(r"\b(every|each)\s+hour\b|\bhourly\b", lower):
        return "0 * * * *"
    days = [
        d
        for w, d in _DAYS.items()
        if re.search(rf"\b(every|each|on|on a)\s+{w}s?\b|\b{w}s\b", lower)
    ]
    if re.search(r"\b(every|each)\s+(week\s*day|working day|business day)s?\b|\bweekdays\b", lower):
        return f"{minute} {hour} * * 1-5"
    if days:
        return f"{minute} {hour} * * {','.join(str(d) for d in sorted(set(days)))}"
    if re.search(r"\b(every|each)\s+week\b|\bweekly\b", lower):
        return f"{minute} {hour} * * 1"
    if re.search(r"\b(every|each)\s+month\b|\bmonthly\b", lower):
        found = re.search(r"\b(?:on\s+the\s+)?(\d{1,2})(?:st|nd|rd|th)\b", lower)
        day = int(found.group(1)) if found and 1 <= int(found.group(1)) <= 28 else 1
        return f"{minute} {hour} {day} * *"
    if re.search(
        r"\b(every|each)\s+(day|morning|evening|night)\b|\bdaily\b|\bevery\s+day\b", lower
    ):
        return f"{minute} {hour} * * *"
    return None
