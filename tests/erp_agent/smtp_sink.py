"""A local SMTP server for tests (aiosmtpd), on an ephemeral port in the test's own event
loop: the emails the agent sent, and a switch that makes it refuse mail (a server down)."""

from __future__ import annotations

import asyncio
import email
import email.policy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session


@dataclass
class Sink:
    host: str = "127.0.0.1"
    port: int = 0
    messages: list[EmailMessage] = field(default_factory=list)
    down: bool = False  # answer every message with 421: the server is unavailable
    refused: int = 0

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.down:
            self.refused += 1
            return "421 Service not available, closing transmission channel"
        raw = (
            envelope.content
            if isinstance(envelope.content, bytes)
            else str(envelope.content).encode()
        )
        parsed = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.messages.append(parsed)
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if address in str(m["To"])]

    @staticmethod
    def body(message: EmailMessage) -> str:
        part: Any = message.get_body(("plain",))
        return str(part.get_content()) if part is not None else ""


@asynccontextmanager
async def smtp_sink() -> AsyncIterator[Sink]:
    sink = Sink()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(sink, hostname="localhost", loop=loop), sink.host, 0
    )
    sink.port = server.sockets[0].getsockname()[1]
    try:
        yield sink
    finally:
        server.close()
        await server.wait_closed()
