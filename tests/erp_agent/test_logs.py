"""Structured logs: JSON or text at the configured level; a turn's end and a failed tool call
are lines with the turn id; secrets are masked and question text is left out unless enabled."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from erp_agent import logs
from erp_agent.config import LogSettings
from erp_agent.events import ToolFinished, TurnFinished

QUESTION = "What do we owe? my password=hunter2secret"


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    stream = io.StringIO()
    yield stream
    root.handlers[:], _ = saved
    root.setLevel(saved[1])


def _configure(stream: io.StringIO, settings: LogSettings) -> None:
    logs.configure(settings)
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]


def _turn(outcome: str = "failed") -> TurnFinished:
    return TurnFinished(turn_id="turn_1", conversation_id="conv_1", user="sales@demo.local",
                        org="default", outcome=outcome, message=QUESTION, model="gpt-test",
                        latency_ms=1234.5)  # fmt: skip


def test_json_lines_carry_the_turn_id_and_never_the_question(captured: io.StringIO) -> None:
    settings = LogSettings(format="json", level="INFO")
    _configure(captured, settings)
    listener = logs.event_logger(settings)
    listener(_turn())
    listener(ToolFinished(turn_id="turn_1", user="sales@demo.local", tool="sales_invoice.list",
                          status="erp_refused", latency_ms=12.0))  # fmt: skip
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert [line["level"] for line in lines] == ["WARNING", "WARNING"]
    assert lines[0]["turn_id"] == "turn_1"
    assert lines[0]["outcome"] == "failed"
    assert lines[0]["model"] == "gpt-test"
    assert lines[0]["question_chars"] == len(QUESTION)
    assert lines[1]["tool"] == "sales_invoice.list"
    assert lines[1]["status"] == "erp_refused"
    assert "owe" not in captured.getvalue()


def test_question_text_only_when_enabled_and_secrets_masked(captured: io.StringIO) -> None:
    settings = LogSettings(format="text", level="INFO", questions=True)
    _configure(captured, settings)
    logs.event_logger(settings)(_turn("answered"))
    logging.getLogger("erp_agent.test").info("key sk-live-abcdefghijklmnop1234 used")
    text = captured.getvalue()
    assert "What do we owe?" in text
    assert "hunter2secret" not in text
    assert "sk-live-abcdefghijklmnop1234" not in text
    assert "turn_id=turn_1" in text


def test_the_level_is_a_setting(captured: io.StringIO) -> None:
    _configure(captured, LogSettings(level="ERROR"))
    logs.event_logger(LogSettings())(_turn())  # a warning
    logging.getLogger("erp_agent.test").error("an error")
    assert captured.getvalue().count("\n") == 1
    assert "an error" in captured.getvalue()
