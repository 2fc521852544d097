"""The server's log: one line per record as text or JSON, every message masked for secrets.

Turn events become log lines: a failed or interrupted turn and every tool call that failed are
warnings carrying the turn id, user, model and tool, so a model or ERP failure can be followed
from the log to the admin console. Question text is written only with ``log.questions``.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

from erp_agent.config import LogSettings
from erp_agent.events import Event, ToolFinished, TurnFinished
from erp_agent.masking import mask_secrets

log = logging.getLogger("erp_agent.turns")
FIELDS = ("turn_id", "conversation_id", "user", "org", "model", "tool", "status", "outcome",
          "latency_ms", "question", "question_chars")  # fmt: skip


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "at": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": mask_secrets(record.getMessage()),
        }
        for name in FIELDS:
            if hasattr(record, name):
                out[name] = getattr(record, name)
        if record.exc_info:
            out["error"] = mask_secrets(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        extra = " ".join(f"{n}={getattr(record, n)}" for n in FIELDS if hasattr(record, n))
        line = mask_secrets(super().format(record))
        return f"{line} [{extra}]" if extra else line


def configure(settings: LogSettings) -> None:
    """The root logger writes to stderr in the configured format and level (uvicorn's loggers
    propagate to it)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if settings.format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


def event_logger(settings: LogSettings) -> Any:
    """A listener for the runtime's event stream that logs how turns end."""

    def on_event(event: Event) -> None:
        base = {"turn_id": event.turn_id, "conversation_id": event.conversation_id,
                "user": event.user, "org": event.org}  # fmt: skip
        if isinstance(event, TurnFinished):
            fields = base | {"model": event.model, "outcome": event.outcome,
                             "latency_ms": round(event.latency_ms)}  # fmt: skip
            if settings.questions:
                fields["question"] = mask_secrets(event.message)
            else:
                fields["question_chars"] = len(event.message)
            level = logging.INFO if event.outcome in ("answered", "refused") else logging.WARNING
            log.log(level, "turn %s %s", event.turn_id, event.outcome, extra=fields)
        elif isinstance(event, ToolFinished) and event.status in ("error", "erp_refused"):
            fields = base | {"tool": event.tool, "status": event.status,
                             "latency_ms": round(event.latency_ms)}  # fmt: skip
            log.warning("tool %s %s in turn %s", event.tool, event.status, event.turn_id,
                        extra=fields)  # fmt: skip

    return on_event
