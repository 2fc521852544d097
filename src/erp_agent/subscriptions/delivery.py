"""Delivering a run's message: email over SMTP (the standard library's client in a thread; the
settings name the server), the ERP's own notification (``Connector.notify``: a ToDo created as
the user in ERPNext) and the web app's inbox (a row in the store).

A message carries the figure, its definition and a link back to the question, on every
channel alike."""

from __future__ import annotations

import asyncio
import datetime as dt
import smtplib
import ssl
import urllib.parse
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from erp_agent.config import SmtpSettings
from erp_agent.errors import ConfigError, ErpAgentError


class DeliveryFailed(ErpAgentError):
    """A channel did not take the message: now (the mail server down: tried again), or for
    good (``final``: no address, no such channel in this ERP)."""

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.final = final


def question_link(base_url: str | None, question: str) -> str:
    """The web app with the question ready to ask again."""
    query = urllib.parse.urlencode({"ask": question})
    return f"{(base_url or '').rstrip('/')}/?{query}"


def compose(
    *,
    title: str,
    question: str,
    headline: str,
    definition: str,
    link: str,
    when: dt.datetime,
    reason: str = "",
    details: list[str] | None = None,
) -> dict[str, Any]:
    """One message for every channel: subject, plain text and its parts."""
    lines = [f"{title}: {headline}", ""]
    if reason:
        lines += [reason, ""]
    lines += details or []
    if definition:
        lines += [f"What this counts: {definition}"]
    lines += [
        f"As of {when:%Y-%m-%d %H:%M %Z}.",
        f"Ask it again: {link}",
        "",
        f'You get this because you subscribed to "{question}". To stop it, ask the agent '
        f'"stop {title}" or pause it in the web app.',
    ]
    return {
        "subject": f"{title}: {headline}",
        "text": "\n".join(lines),
        "headline": headline,
        "definition": definition,
        "link": link,
        "question": question,
        "at": when.isoformat(),
    }


class Mailer:
    """Sends email through the configured SMTP server."""

    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings

    @property
    def configured(self) -> bool:
        return bool(self.settings.host)

    async def send(self, to: str, message: dict[str, Any]) -> str:
        """Send; the Message-ID. DeliveryFailed when the server refuses or cannot be reached."""
        if not self.configured:
            raise ConfigError("No mail server is configured: set ERP_AGENT_SMTP_HOST.")
        mail = EmailMessage()
        mail["From"] = self.settings.sender
        mail["To"] = to
        mail["Subject"] = str(message["subject"])
        mail["Message-ID"] = make_msgid(domain=self.settings.sender.rpartition("@")[2] or None)
        mail.set_content(str(message["text"]))
        try:
            await asyncio.to_thread(self._send, mail)
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryFailed(f"The mail server {self.settings.host}:{self.settings.port} did not take the email: {exc}") from exc  # fmt: skip
        return str(mail["Message-ID"])

    def _send(self, mail: EmailMessage) -> None:
        s = self.settings
        client: smtplib.SMTP
        if s.ssl:
            client = smtplib.SMTP_SSL(s.host or "", s.port, timeout=s.timeout,
                                      context=ssl.create_default_context())  # fmt: skip
        else:
            client = smtplib.SMTP(s.host or "", s.port, timeout=s.timeout)
        with client:
            if s.starttls and not s.ssl:
                client.starttls(context=ssl.create_default_context())
            if s.username:
                password = s.password.get_secret_value() if s.password else ""
                client.login(s.username, password)
            client.send_message(mail)
