"""The optional vision path: a configured vision model transcribes a page image to text.

The model's only job is transcription; the deterministic parser reads its output like OCR
text, so a model never decides a field and never sees the document as instructions.
"""

from __future__ import annotations

import base64
from importlib import resources

from erp_agent.documents.extract import Transcriber
from erp_agent.models.base import ChatModel, Message


def transcription_prompt() -> str:
    return (resources.files("erp_agent.documents") / "prompts" / "transcribe.md").read_text(
        encoding="utf-8"
    )


def vision_transcriber(model: ChatModel) -> Transcriber:
    """A Transcriber that sends one PNG page to ``model`` and returns its text."""
    prompt = transcription_prompt()

    async def transcribe(png: bytes) -> str:
        url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        completion = await model.complete(
            [
                Message("system", prompt),
                Message("user", "Transcribe this page.", images=(url,)),
            ],
            temperature=0,
        )
        return completion.content or ""

    return transcribe
