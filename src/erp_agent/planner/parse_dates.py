"""Dates in a request → a period (from, to) or a single as-of date, relative to the ERP's today.

Fiscal years are taken as calendar years (the demo ERP's and most ERPNext tenants' default); a
tenant with another fiscal year start gets calendar periods, which the answer names explicitly.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
MONTHS["sept"] = 9
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_FULL_MONTH = "(" + "|".join(n for n in calendar.month_name if n and n != "May") + ")"
_UNITS = {"day": 1, "week": 7}
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|{_ORDINAL}\s+{_MONTH}(?:,?\s+\d{{4}})?|{_MONTH}\s+{_ORDINAL}"
    rf"(?:,?\s+\d{{4}})?|{_MONTH}(?:\s+\d{{4}})?)"
)


WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAY = re.compile(
    r"\b(next|this|coming|last|previous|past)\s+(" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Period:
    start: dt.date
    end: dt.date
    label: str

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def month_end(year: int, month: int) -> dt.date:
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def _quarter(year: int, q: int) -> Period:
    start = dt.date(year, 3 * q - 2, 1)
    return Period(start, month_end(year, 3 * q), f"Q{q} {year}")


def _shift_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


shift_months = _shift_months


# "The past week" is the days just gone up to today, as Frappe's "previous 1 week" filter reads
# it, not the calendar week before this one ("last week").
_PAST_MONTHS = {"week": 0, "month": 1, "quarter": 3, "year": 12}


def _rolling(unit: str, today: dt.date) -> Period:
    months = _PAST_MONTHS[unit]
    start = _shift_months(today, -months) if months else today - dt.timedelta(days=7)
    return Period(start, today, f"the past {unit}")


def _counted_span(t: str, today: dt.date) -> Period | None:
    """'The last 30 days' up to today; 'the next 2 weeks' from today ('due in …')."""
    m = re.search(
        r"\b(last|past|previous|next|coming|within the next)\s+(\d{1,3})\s+(day|week|month)s?\b",
        t,
    )
    if m is None:
        return None
    sign = -1 if m.group(1) in ("last", "past", "previous") else 1
    n, unit = int(m.group(2)), m.group(3)
    other = (
        _shift_months(today, sign * n)
        if unit == "month"
        else today + dt.timedelta(days=sign * n * _UNITS[unit])
    )
    if sign < 0:
        return Period(other, today, f"the last {n} {unit}s")
    return Period(today, other, f"the next {n} {unit}s")


def _relative(which: str, unit: str, today: dt.date) -> Period:
    step = {"this": 0, "current": 0, "last": -1, "previous": -1, "past": -1, "next": 1}[which]
    if unit == "week":
        start = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=step)
        return Period(start, start + dt.timedelta(days=6), f"{which} week")
    if unit == "month":
        first = _shift_months(today.replace(day=1), step)
        return Period(first, month_end(first.year, first.month), f"{first:%B %Y}")
    if unit == "quarter":
        q = (today.month - 1) // 3 + 1 + step
        year = today.year + (q - 1) // 4
        return _quarter(year, (q - 1) % 4 + 1)
    year = today.year + step
    label = f"fiscal year {year}" if "fiscal" in unit else str(year)
    return Period(dt.date(year, 1, 1), dt.date(year, 12, 31), label)


def weekday_named(text: str, today: dt.date) -> dt.date | None:
    """The day a weekday names: "next Monday" is that day of next week (Monday to Sunday),
    "this Friday" of this week, "coming Friday" the first one after today, "last Friday" the
    latest one before today."""
    m = _WEEKDAY.search(text)
    if m is None:
        return None
    which, day = m.group(1).lower(), WEEKDAYS[m.group(2).lower()]
    monday = today - dt.timedelta(days=today.weekday())
    if which == "next":
        return monday + dt.timedelta(weeks=1, days=day)
    if which == "this":
        return monday + dt.timedelta(days=day)
    if which == "coming":
        return today + dt.timedelta(days=(day - today.weekday() - 1) % 7 + 1)
    return today - dt.timedelta(days=(today.weekday() - day - 1) % 7 + 1)


def _one_day(t: str, today: dt.date) -> Period | None:
    """Today, yesterday, tomorrow or a weekday ("next Monday")."""
    for word, offset in (("today", 0), ("yesterday", -1), ("tomorrow", 1)):
        if re.search(rf"\b{word}\b", t):
            day = today + dt.timedelta(days=offset)
            return Period(day, day, word)
    named = weekday_named(t, today)
    if named is not None:
        return Period(named, named, f"{calendar.day_name[named.weekday()]} {named}")
    return None


def parse_date(text: str, today: dt.date, *, end: bool = False) -> dt.date | None:
    """One date: ISO, '1 May', 'May 1', 'May 2025' (a month alone: its first or last day)."""
    text = text.strip().lower().rstrip(".,")
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        pass
    m = re.fullmatch(rf"{_ORDINAL}\s+{_MONTH}(?:,?\s+(\d{{4}}))?", text)
    if m:
        day, month, year = int(m.group(1)), MONTHS[m.group(2)[:3]], m.group(3)
    else:
        m = re.fullmatch(rf"{_MONTH}\s+{_ORDINAL}(?:,?\s+(\d{{4}}))?", text)
        if m:
            month, day, year = MONTHS[m.group(1)[:3]], int(m.group(2)), m.group(3)
        else:
            m = re.fullmatch(rf"{_MONTH}(?:\s+(\d{{4}}))?", text)
            if not m:
                return None
            month, year = MONTHS[m.group(1)[:3]], m.group(2)
            y = int(year) if year else _year_for_month(month, today)
            return month_end(y, month) if end else dt.date(y, month, 1)
    y = int(year) if year else today.year
    try:
        return dt.date(y, month, day)
    except ValueError:
        return None


_STARTING = re.compile(
    rf"\b(?:starting|starts|start(?:ing)? on|from|beginning|commencing|effective)\s+"
    rf"(?:on\s+|from\s+|the\s+)?({_DATE})(?![\w-])"
)


def start_said(text: str, today: dt.date) -> dt.date | None:
    """The day a new document's span starts on ("3 days annual leave starting 11 jan"): a day
    said without a year is the one nearest today, as a form's date is meant (in late November
    11 January is the coming one; a month alone is no day to start on)."""
    m = _STARTING.search(text.lower())
    if m is None or not re.search(r"\d", m.group(1)):
        return None
    day = parse_date(m.group(1), today)
    if day is None or re.search(r"\d{4}", m.group(1)):
        return day
    near = [_shift_months(day, 12 * k) for k in (-1, 0, 1)]
    return min(near, key=lambda d: abs((d - today).days))


# "17th and 18th dec", "17-18 december", "from the 17th to the 18th of dec", "dec 17-18": the
# days a new document spans (leave), in one month.
_TO = r"\s*(?:and|&|-|–|to|till|until|through|thru)\s*(?:the\s+)?"
_DAY_SPAN = re.compile(
    rf"\b(?:the\s+)?{_ORDINAL}{_TO}{_ORDINAL}\s+(?:of\s+)?{_MONTH}\b(?:,?\s+(\d{{4}}))?"
    rf"|\b{_MONTH}\s+{_ORDINAL}{_TO}{_ORDINAL}\b(?:,?\s+(\d{{4}}))?"
)


def span_said(text: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The first and last day of a span of days in one month ("17th and 18th dec"); without a
    year, the one nearest today, as a form's date is meant."""
    m = _DAY_SPAN.search(text.lower())
    if m is None:
        return None
    if m.group(1) is not None:
        first, last, month, year = m.group(1), m.group(2), m.group(3), m.group(4)
    else:
        month, first, last, year = m.group(5), m.group(6), m.group(7), m.group(8)
    try:
        days = [dt.date(int(year or today.year), MONTHS[month[:3]], int(d)) for d in (first, last)]
    except ValueError:
        return None
    if year is None:
        near = [[_shift_months(d, 12 * k) for d in days] for k in (-1, 0, 1)]
        days = min(near, key=lambda ds: abs((ds[0] - today).days))
    return (days[0], days[1]) if days[0] <= days[1] else None


def _year_for_quarter(q: int, today: dt.date) -> int:
    """A quarter named without a year is the latest one that has begun ("Q2" in January is last
    year's), as a month named alone is."""
    return today.year if 3 * q - 2 <= today.month else today.year - 1


def _year_for_month(month: int, today: dt.date) -> int:
    """A month named without a year is the latest one not after today ("in March" in November)."""
    return today.year if month <= today.month else today.year - 1


def _since_date(t: str, today: dt.date) -> Period | None:
    """ "Since 1 June": from that date up to today."""
    m = re.search(rf"\b(?:since|from|after)\s+({_DATE})", t)
    start = parse_date(m.group(1), today) if m else None
    if m is None or start is None:
        return None
    if start > today and not re.search(r"\d{4}", m.group(1)):
        # "since 1 June" in January: the June 1 that has passed, as a month named alone is.
        start = _shift_months(start, -12)
    return Period(start, today, f"since {start}")


_MONTH_LIST = re.compile(rf"\b{_MONTH}(?:\s*,\s*{_MONTH})*\s*,?\s+(?:and|&)\s+{_MONTH}\b")


def months_listed(text: str) -> list[str]:
    """Three or more months, or two joined by "and", named one by one ("September, October and
    November"): each asked for, so the figure is per month over their span."""
    m = _MONTH_LIST.search(text.lower())
    if m is None:
        return []
    return re.findall(_MONTH, m.group(0))


def _months_span(t: str, today: dt.date) -> Period | None:
    """Whole months from the first named to the last: "April to June" (in the year the later
    one is in, or the year given), "September, October and November"."""
    m = re.search(rf"\b{_MONTH}\s+(?:to|until|till|through|-)\s+{_MONTH}(?:\s+(\d{{4}}))?\b", t)
    listed = months_listed(t)
    if m is not None:
        named, year_said = [m.group(1), m.group(2)], m.group(3)
    elif listed:
        named, year_said = listed, None
    else:
        return None
    first, last = MONTHS[named[0][:3]], MONTHS[named[-1][:3]]
    year = int(year_said) if year_said else _year_for_month(last, today)
    if first > last:
        return None
    start, end = dt.date(year, first, 1), month_end(year, last)
    return Period(start, end, f"{start} to {end}")


def parse_period(text: str, today: dt.date) -> Period | None:
    """The period a request names, or None."""
    t = text.lower()
    m = re.search(rf"\b(?:between|from)\s+({_DATE})\s+(?:and|to|until|till|-)\s+({_DATE})", t)
    if m:
        start, end = (
            parse_date(m.group(1), today),
            parse_date(m.group(m.lastindex or 0), today, end=True),
        )
        if start and end:
            return Period(start, end, f"{start} to {end}")
    span = _months_span(t, today)
    if span is not None:
        return span
    m = re.search(
        r"\b(?:since|from)\s+(?:the\s+)?(?:start|beginning)\s+of\s+(this|last|previous|the\s+last)\s+"
        r"(week|month|quarter|year|fiscal year|financial year)\b",
        t,
    )
    if m:
        # "since the start of last quarter": from that unit's first day up to today.
        side = "last" if "last" in m.group(1) or m.group(1) == "previous" else "this"
        unit = "fiscal year" if "year" in m.group(2) and m.group(2) != "year" else m.group(2)
        start = _relative(side, unit, today).start
        return Period(start, today, f"since {start}")
    since = _since_date(t, today)
    if since is not None:
        return since
    span = _counted_span(t, today)
    if span is not None:
        return span
    if re.search(r"\b(ytd|year to date|year-to-date|so far this year)\b", t):
        return Period(dt.date(today.year, 1, 1), today, f"{today.year} to date")
    if re.search(r"\b(mtd|month to date)\b", t):
        return Period(today.replace(day=1), today, f"{today:%B %Y} to date")
    if re.search(r"\b(qtd|quarter to date)\b", t):
        q = _relative("this", "quarter", today)
        return Period(q.start, today, f"{q.label} to date")
    m = re.search(
        rf"\b(?:q([1-4])|(first|second|third|fourth|1st|2nd|3rd|4th) quarter|{_MONTH})\s+"
        r"(?:of\s+)?(this|current|last|previous|next)\s+year\b",
        t,
    )
    if m:
        # "Q3 this year", "q3 last year", "march last year": that quarter or month of the year.
        year = today.year + {"last": -1, "previous": -1, "next": 1}.get(m.group(4), 0)
        if m.group(1) or m.group(2):
            return _quarter(year, int(m.group(1) or _ORDINAL_QUARTERS[m.group(2)]))
        month = MONTHS[m.group(3)[:3]]
        return Period(
            dt.date(year, month, 1), month_end(year, month), f"{calendar.month_name[month]} {year}"
        )
    m = re.search(
        r"\b(this|current|last|previous|past|next)\s+(fiscal year|financial year|fy|week|month|quarter|year)\b",
        t,
    )
    if m:
        unit = (
            "fiscal year" if m.group(2) in ("fiscal year", "financial year", "fy") else m.group(2)
        )
        if m.group(1) == "past" and unit in _PAST_MONTHS:
            return _rolling(unit, today)
        return _relative(m.group(1), unit, today)
    day = _one_day(t, today)
    if day is not None:
        return day
    m = re.search(
        r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter(?:\s+(?:of\s+)?(\d{4}))?\b", t
    )
    if m:
        which = _ORDINAL_QUARTERS[m.group(1)]
        return _quarter(int(m.group(2)) if m.group(2) else _year_for_quarter(which, today), which)
    m = re.search(r"\bq([1-4])(?:\s*(?:of\s+)?(\d{4}))?\b", t)
    if m:
        number = int(m.group(1))
        year = int(m.group(2)) if m.group(2) else _year_for_quarter(number, today)
        return _quarter(year, number)
    m = re.search(rf"\b(?:in|for|during|of)\s+{_MONTH}(?:\s+(\d{{4}}))?\b", t)
    if m:
        month = MONTHS[m.group(1)[:3]]
        year = int(m.group(2)) if m.group(2) else _year_for_month(month, today)
        return Period(
            dt.date(year, month, 1), month_end(year, month), f"{calendar.month_name[month]} {year}"
        )
    # A month said alone ("debtors GL march"), spelt out in full so "may" and "mar" stay words,
    # and not the start of a name ("March Supplies").
    m = re.search(rf"(?<![\w-])(?i:{_FULL_MONTH})(?!\s+[A-Z])(?:\s+(20\d{{2}}))?(?![\w-])", text)
    if m:
        month = MONTHS[m.group(1).lower()[:3]]
        year = int(m.group(2)) if m.group(2) else _year_for_month(month, today)
        return Period(
            dt.date(year, month, 1), month_end(year, month), f"{calendar.month_name[month]} {year}"
        )
    m = re.search(r"\b(?:in|for|during|of|fy)\s*(20\d{2})\b", t) or re.search(
        r"(?<![\w\-/.,])(20\d{2})(?![\w\-/.,])", t
    )
    if m:
        year = int(m.group(1))
        return Period(dt.date(year, 1, 1), dt.date(year, 12, 31), str(year))
    return None


def parse_as_of(text: str, today: dt.date) -> dt.date | None:
    """'as of/at <date>', 'as of last month end', 'at the end of last quarter'."""
    t = text.lower()
    m = re.search(
        r"\b(?:as of|as at|at)\s+(?:the\s+)?(?:end of\s+)?(last|this|previous)\s+(month|quarter|year)(?:\s*end)?\b",
        t,
    )
    if m:
        return _relative(m.group(1), m.group(2), today).end
    m = re.search(rf"\b(?:as of|as at|on)\s+({_DATE})", t)
    if m:
        return parse_date(m.group(1), today, end=True)
    if re.search(r"\bas of (?:today|now)\b", t):
        return today
    return None


_ORDINAL_QUARTERS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
                     "fourth": 4, "4th": 4}  # fmt: skip
_COUNT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "a": 1}  # fmt: skip
_AGE_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}


_AGE_RANGE = re.compile(
    r"\b(\d{1,3})\s*(?:-|–|to)\s*(\d{1,3})\s*days?\b|\bbetween\s+(\d{1,3})\s+and\s+(\d{1,3})\s+days?\b"
)
_AGED = re.compile(r"\b(overdue|late|past due|old|ageing|aging|outstanding|owed?|owing|bucket)\b")


def parse_age(text: str) -> tuple[int | None, int | None]:
    """The age a request asks for, as (more than N days, at most M days): "more than 60 days
    overdue" is (60, None), "1-30 days overdue" and "between 31 and 60 days late" a bucket,
    (0, 30) and (30, 60) — at least 1 and 31 days past due, at most 30 and 60."""
    t = text.lower()
    m = _AGE_RANGE.search(t)
    if m and _AGED.search(t):
        low, high = int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))
        if low < high:
            return max(low - 1, 0), high
    return parse_age_days(text), None


_BUCKET = re.compile(
    r"\b(\d{1,3})\s*(?:-|–|to)\s*(\d{1,3})\b|\b(?:more than|over|above|beyond)\s+(\d{1,3})\b|\b(\d{1,3})\s*\+"
)


# "30/60/90 buckets", "buckets of 30, 60 and 90": the upper bounds, the last open-ended.
_BOUNDS = re.compile(r"\b(\d{1,3})(?:\s*(?:/|,|and)\s*(\d{1,3}))+\b")
_BOUNDS_SAID = re.compile(r"\b(buckets?|bands?|brackets?|ranges?)\b")
# "Up to 30 days", "30 days or less": the first bucket; "older than that": the rest.
_UP_TO = re.compile(
    r"\b(?:up to|within|under|less than|at most|no more than)\s+(\d{1,3})\b"
    r"|\b(\d{1,3})\s*days?\s+(?:or less|or under|or fewer|and under|and less)\b"
)
_BEYOND_THAT = re.compile(r"\b(?:older|more|longer|later|over|beyond)(?: than)? (?:that|those)\b")


def parse_age_buckets(text: str) -> list[tuple[int, int | None]]:
    """Every ageing bucket a request lists ("1-30, 31-60, 61-90 and more than 90 days
    overdue", "30/60/90 buckets", "30 days or less and older than that"), each as
    ``parse_age`` gives one; fewer than two: none."""
    t = text.lower()
    if not _AGED.search(t):
        return []
    bounds = _BOUNDS.search(t) if _BOUNDS_SAID.search(t) else None
    if bounds is not None:
        ends = [int(n) for n in re.findall(r"\d{1,3}", bounds.group(0))]
        if len(ends) > 1 and ends == sorted(set(ends)) and ends[0] > 0:
            starts = [0, *ends]
            return [(a, b) for a, b in zip(starts, ends, strict=False)] + [(ends[-1], None)]
    if not re.search(r"\b(days?|ageing|aging|buckets?)\b", t):
        return []
    out: list[tuple[int, int | None]] = []
    first = _UP_TO.search(t)
    if first is not None:
        days = int(first.group(1) or first.group(2))
        out.append((0, days))
        if _BEYOND_THAT.search(t):
            out.append((days, None))
    for m in _BUCKET.finditer(t):
        if m.group(1):
            low, high = int(m.group(1)), int(m.group(2))
            if low < high:
                out.append((max(low - 1, 0), high))
        else:
            out.append((int(m.group(3) or m.group(4)), None))
    return out if len(out) > 1 else []


def parse_age_days(text: str) -> int | None:
    """'more than 60 days overdue', 'overdue by over 30 days', '90+ days', 'overdue by more than
    two months' (30 days a month, as ageing buckets count) → the day count."""
    t = text.lower()
    m = re.search(
        r"(?:more than|over|above|at least|greater than|beyond|past)\s+("
        + "|".join(_COUNT_WORDS)
        + r"|\d{1,3})\s+(week|month|year)s?\b",
        t,
    )
    if m and re.search(r"\b(overdue|late|past due|old|ageing|aging|outstanding)\b", t):
        n = int(m.group(1)) if m.group(1).isdigit() else _COUNT_WORDS[m.group(1)]
        return n * _AGE_UNITS[m.group(2)]
    m = re.search(
        r"(?:more than|over|above|at least|greater than|beyond|past|>=?)\s*(\d{1,4})\s*days?", t
    )
    if m:
        return int(m.group(1))
    m = re.search(r"\b(\d{1,4})\+?\s+days?\s+(?:overdue|late|past due|old)", t)
    if m:
        return int(m.group(1))
    return oldest_bucket(t)


# "The oldest bucket", "the 121-above band": the last of the ageing buckets (0-30 … 121-above,
# ERPNext's default ranges), more than 120 days past due.
_OLDEST = re.compile(
    r"\b(?:oldest|last|highest|top|worst|longest)\s+(?:ageing\s+|aging\s+|age\s+)?"
    r"(?:bucket|band|bracket|range|column)s?\b|\b121\s*(?:-|to)?\s*(?:above|plus|\+)"
    r"|\b120\s*(?:\+|plus)"
)
OLDEST_BUCKET_DAYS = 120


def oldest_bucket(text: str) -> int | None:
    return OLDEST_BUCKET_DAYS if _OLDEST.search(text.lower()) else None


def age_words(text: str, days: int, until: int | None = None) -> str:
    """An age as the user put it ("more than two months"), so the answer restates their words
    and not a day count they never said; "more than N days" when they gave days."""
    if until is not None:
        return f"{days + 1}-{until} days"
    m = re.search(
        r"(?:more than|over|above|at least|greater than|beyond|past)\s+(?:"
        + "|".join(_COUNT_WORDS)
        + r"|\d{1,3})\s+(?:week|month|year)s?\b",
        text.lower(),
    )
    return m.group(0) if m else f"more than {days} days"


@dataclass(frozen=True)
class Comparison:
    """Two periods a request sets against each other: the current one (to today when it is
    still running) and the earlier one it is compared with — the same days of the earlier
    unit when the current one runs to date, with that whole unit in ``full_earlier``."""

    current: Period
    earlier: Period
    full_earlier: Period | None = None

    @property
    def what(self) -> str:
        """How the comparison was read, in words the answer says."""
        if self.full_earlier is not None:
            return (
                f"{self.current.start} to {self.current.end} against the same days of "
                f"{self.full_earlier.label} ({self.earlier.start} to {self.earlier.end})"
            )
        return (
            f"{self.current.start} to {self.current.end} against "
            f"{self.earlier.start} to {self.earlier.end}"
        )


_VERSUS = re.compile(
    r"\b(?:vs\.?|versus|v\.?s\.?|compared (?:to|with)|comparing (?:it )?(?:to|with)|as against|"
    # "booked against the Nairobi branch", "raised against PO-1": what a posting is made to.
    r"(?<!booked )(?<!posted )(?<!charged )(?<!raised )(?<!raise )(?<!issued )(?<!billed )(?<!invoiced )"
    r"(?<!made )(?<!drawn )(?<!allocated )(?<!reconciled )against|relative to|"
    # "Are sales up or down on last month?": set against it.
    r"(?:up or down|down or up|up|down) on(?= (?:the |a )?(?:last|previous|prior|same|this time|"
    r"a year|q[1-4]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|\d{4}))|"
    r"than(?= (?:the |in |during |for )?(?:last|previous|prior|same|a year|this time|"
    r"q[1-4]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|\d{4})))\b"
)
_A_YEAR_AGO = re.compile(
    r"\b(?:(?:the )?(?:same|corresponding) (?:month|quarter|period|time|days?|weeks?|stretch)"
    r"(?: (?:of|in))? (?:last|the previous|the prior) year|a year (?:ago|earlier|before)|"
    r"last year'?s?|the year before|(?:the )?prior year|(?:the )?previous year|"
    r"(?:this|that) time last year)\b"
)
_BEFORE = re.compile(
    r"\b(?:the (?:month|quarter|week|year|period|one) before|(?:the )?(?:prior|previous) "
    r"(?:period|one|month|quarter|week|year|\d+(?: (?:days|weeks|months))?)|before that|"
    r"the \d+(?: (?:days|weeks|months))? before)\b"
)


_SAME_DAY = re.compile(
    r"\b(?:(?:to|by|at|up to) the same (?:day|date|point)|same (?:day|date|point) (?:last|the)|"
    r"so far|to date|like[- ]for[- ]like)\b"
)


def _unit_of(period: Period) -> str | None:
    months = (period.end.year - period.start.year) * 12 + period.end.month - period.start.month + 1
    if period.start.day != 1:
        return None
    return {1: "month", 3: "quarter", 12: "year"}.get(months)


def _running(unit: str, today: dt.date) -> Period:
    return _relative("this", unit, today)


def sets_against(text: str) -> bool:
    """Whether the words set one thing against another ("X vs Y", "compared with")."""
    return _VERSUS.search(text.lower()) is not None


def _unperiodised(parts: list[str], today: dt.date) -> int:
    """How many of the last messages name no period and compare nothing ("and houston?"):
    they leave the periods compared before them as they were."""
    n = 0
    for part in reversed(parts[1:]):
        if _VERSUS.search(part.lower()) or parse_period(part, today) is not None:
            break
        n += 1
    return n


def comparing_message(said: str, today: dt.date) -> str:
    """The newest message that names a period or a comparison (follow-ups joined by " ; ")."""
    parts = said.split(" ; ")
    return parts[len(parts) - 1 - _unperiodised(parts, today)]


def compared_in(said: str, today: dt.date) -> Comparison | None:
    """The comparison the last message of a conversation's request asks ("a ; b ; c", each
    message in order): "vs the same quarter last year" after "revenue for Q3" sets Q3 against
    Q3 a year back, because the words before "vs" name no period of their own."""
    parts = said.split(" ; ")
    parts = parts[: len(parts) - _unperiodised(parts, today)]
    last = parts[-1]
    m = _VERSUS.search(last.lower())
    if m is not None and parse_period(last[: m.start()], today) is None:
        # The period asked last before this message is the one set against the other.
        dated = next((p for p in reversed(parts[:-1]) if parse_period(p, today)), None)
        if dated is not None:
            return parse_comparison(f"{dated} {last}", today)
    return parse_comparison(last, today)


# "Compare my sales this quarter with last quarter": "with" (or "to", "and") sets the two
# periods against each other once "compare" is said.
_COMPARE_WITH = re.compile(
    r"\bcompar\w*\b.*?\b(with|to|and)\b(?= (?:the |that of |those of )?(?:last|previous|prior|same|"
    r"q[1-4]|a year|this time|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|\d{4}))"
)
# "Than last?", "vs the previous one": the unit just before, said with no unit of its own.
_BARE_BEFORE = re.compile(
    r"^\s*(?:the |that of )?(?:last|previous|prior)(?: one)?\b(?!\s+(?:\d|week|month|quarter|year|fy))"
)
# "All of last year", "the whole of last quarter": that whole unit, not its same days.
_WHOLE = re.compile(r"\b(?:all of|the whole of|whole|full|entire|complete)\s+")


def parse_comparison(text: str, today: dt.date) -> Comparison | None:
    """'this month vs last month', 'Q3 vs Q2', 'last quarter against the same quarter last
    year', 'September compared with August', 'the last 30 days vs the 30 before', 'compare
    this quarter with last quarter', 'this year vs all of last year'."""
    t = text.lower()
    m = _VERSUS.search(t)
    start_at = m.start() if m is not None else 0
    end_at = m.end() if m is not None else 0
    if m is None:
        w = _COMPARE_WITH.search(t)
        if w is None:
            return None
        start_at, end_at = w.start(1), w.end(1)
    left, right = t[:start_at], t[end_at:]
    whole = _WHOLE.search(right) is not None
    right = _WHOLE.sub("", right)
    current = parse_period(left, today)
    said = current  # before it is cut to today: "this quarter" is a quarter
    later = parse_period(right, today) if whole or not _A_YEAR_AGO.search(right) else None
    if current is None and later is not None:
        # "sales compared with last month": the running unit the later one is of.
        unit = _unit_of(later)
        current = _running(unit, today) if unit else None
    if current is None and _A_YEAR_AGO.search(right):
        # "are we selling more than last year?": this year so far, against last year's.
        current = _running("year", today)
    if current is None:
        current = parse_period(t, today) or Period(
            dt.date(today.year, 1, 1), today, str(today.year)
        )
    # Still running, or said to be compared as far as today ("to the same day", "so far").
    running = current.end > today or (
        _SAME_DAY.search(t) is not None and current.start <= today <= current.end
    )
    if running:
        current = Period(current.start, today, f"{current.label} to date")
    span = (current.end - current.start).days
    if whole and later is not None and later.end < current.start:
        return Comparison(current, later)  # "vs all of last year": the whole of it
    if later is None and _BARE_BEFORE.search(right):
        later = _before(said or current, False)
    if _A_YEAR_AGO.search(right) or (later is None and "year on year" in t):
        start, end = _shift_months(current.start, -12), _shift_months(current.end, -12)
        if current.end == month_end(current.end.year, current.end.month) and not running:
            end = month_end(end.year, end.month)
        return Comparison(current, Period(start, end, f"{start} to {end}"))
    # "The last 6 months vs the previous 6 months", "q2 against the previous quarter": the
    # stretch just before the first, not one read from today.
    same = later is not None and (later.start, later.end) == (current.start, current.end)
    if (later is None or same or later.start > current.start) and _BEFORE.search(right):
        later = _before(current, running)
    if later is None:
        return None
    if later.start > current.start:
        current, later = later, current
    if running and _unit_of(later) is not None:
        end = min(later.end, later.start + dt.timedelta(days=span))
        return Comparison(current, Period(later.start, end, f"{later.start} to {end}"), later)
    return Comparison(current, later)


def _before(current: Period, running: bool) -> Period:
    """The unit just before: the month, quarter or year before a whole (or running) one, else
    the same number of days just before."""
    whole = Period(current.start, month_end(current.end.year, current.end.month), "")
    unit = _unit_of(whole if running else current)
    if unit is not None:
        months = {"month": 1, "quarter": 3, "year": 12}[unit]
        start = _shift_months(current.start, -months)
        last = _shift_months(start, months - 1)
        return Period(
            start,
            month_end(last.year, last.month),
            f"{start:%B %Y}" if months == 1 else f"{start} to {month_end(last.year, last.month)}",
        )
    days = (current.end - current.start).days + 1
    start, end = current.start - dt.timedelta(days=days), current.start - dt.timedelta(days=1)
    return Period(start, end, f"{start} to {end}")
