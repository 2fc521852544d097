"""The one exception hierarchy of erp-agent.

Three branches under one root:

- ``ConfigError``: the package was misused or misconfigured (bad settings, a broken catalog, an
  unknown name asked for by code). Retrying will not help; the message says what to fix.
- runtime errors (``ErpError``, ``ModelError``, ``StoreError``): something outside our code failed
  while serving a request. Layers add their own subclasses under these branches.
- ``ToolError``: a tool could not do what was asked; its message is shown to the model, which
  can correct its arguments and try again.

Catch ``ErpAgentError`` to catch everything the package raises on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict


class ErpAgentError(Exception):
    """Root of every exception erp-agent raises on purpose."""


class ConfigError(ErpAgentError):
    """Misuse or misconfiguration: settings, data files or calling code must change."""


class CatalogError(ConfigError):
    """The declarative catalog is invalid, or code asked it for something it does not hold.

    ``problems`` lists each problem on its own (file, entity and what is wrong), so a loader can
    report every mistake in a broken catalog at once instead of one per restart.
    """

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems: tuple[str, ...] = (
            (problems,) if isinstance(problems, str) else tuple(problems)
        )
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            listed = "\n".join(f"  - {p}" for p in self.problems)
            message = f"{len(self.problems)} problems in the catalog:\n{listed}"
        super().__init__(message)


class ErpError(ErpAgentError):
    """The system of record failed or could not be reached (connectors extend this branch)."""


class ModelError(ErpAgentError):
    """A chat or embedding model provider failed (providers extend this branch).

    ``str(error)`` is the message for the user: what happened and what to do next. ``detail``
    keeps the provider's own words for the log; ``status`` its HTTP status, when there was one.
    """

    default_message = "The AI model failed. Try again; if it keeps failing, tell an administrator."
    retryable = False  # whether another attempt may succeed (ResilientModel reads this)

    def __init__(
        self, message: str | None = None, *, detail: str = "", status: int | None = None
    ) -> None:
        self.detail = detail
        self.status = status
        super().__init__(message or self.default_message)


class ModelAuthError(ModelError):
    """The provider rejected our key (401/403). Only an administrator can fix it."""

    default_message = (
        "The AI model provider rejected this installation's credentials. "
        "Please tell an administrator to check the model's API key in the settings."
    )


class ModelRateLimited(ModelError):
    """The provider asked us to slow down (429), and the allowed retries were spent."""

    retryable = True

    def __init__(
        self,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        detail: str = "",
        status: int | None = 429,
    ) -> None:
        self.retry_after = retry_after
        if message is None:
            seconds = max(1, round(retry_after or 0))
            wait = f"in about {seconds} second{'s' * (seconds != 1)}" if retry_after else "shortly"
            message = (
                "The AI model provider is limiting how fast we can send requests. "
                f"Please try again {wait}."
            )
        super().__init__(message, detail=detail, status=status)


class ModelTimeout(ModelError):
    """The provider did not answer in time."""

    retryable = True
    default_message = (
        "The AI model did not answer in time. Please try again; "
        "if it keeps happening, ask a smaller question or tell an administrator."
    )


class ModelContextTooLong(ModelError):
    """The prompt does not fit the model's context window; retrying the same prompt will not help."""

    default_message = (
        "This conversation is too long for the AI model to read at once. "
        "Start a new conversation, or ask about fewer records at a time."
    )


class ModelUnavailable(ModelError):
    """The provider could not be reached, or answered with a server error (5xx)."""

    retryable = True
    default_message = (
        "The AI model provider is not responding right now. Please try again in a few minutes; "
        "if it persists, tell an administrator."
    )


class ModelBadRequest(ModelError):
    """The provider rejected the request as malformed (400): a bug or an unsupported setting."""

    default_message = (
        "The AI model provider rejected the request. This is a problem in the setup, "
        "not in your question: please tell an administrator."
    )


class ModelOutputInvalid(ModelError):
    """The model answered something that cannot be used: an unreadable tool call (after being
    asked once to correct it), an empty answer, or an answer far too long to be one."""

    default_message = (
        "The AI model's answer could not be used. Please try again; if it keeps happening, "
        "the model may not handle tool calls well: tell an administrator."
    )


class TokenBudgetExceeded(ModelError):
    """The organisation has spent its monthly token budget; no call is made until it resets."""

    def __init__(self, org: str, used: int, budget: int) -> None:
        self.org = org
        self.used = used
        self.budget = budget
        super().__init__(
            f"Your organisation has used its monthly AI budget ({used:,} of {budget:,} tokens). "
            "It resets on the first day of next month; an administrator can raise it with "
            "ERP_AGENT_MONTHLY_TOKEN_BUDGET."
        )


class ModelRequestBlocked(ConfigError):
    """A test tried to reach a real model provider (see ``models.testing.block_real_providers``)."""


class StoreError(ErpAgentError):
    """Persistence failed: the conversation/proposal/result store or a search index.

    The message names the store's address for the operator (logs, the command line); a
    channel never shows it to a user (``channels.faults``)."""


class StoreUnavailable(StoreError):
    """The store's database cannot be reached: connection refused or dropped, no free
    connection in time, a lock held too long. Retrying later may succeed (HTTP 503)."""


class ToolError(ErpAgentError):
    """A tool could not do what was asked; the message is shown to the model."""


class ToolInputError(ToolError):
    """The arguments were valid JSON but cannot be acted on (a no-op update, an action that is
    not available now); the message says what to change."""


class DocumentUnreadable(ToolInputError):
    """A scanned file cannot be turned into a draft: not a PDF or image, encrypted, over the
    size or page limit, or no text could be read. The message tells the user what to send."""


class NeedsChoice(ToolInputError):
    """The input names several records the user could mean: they pick one.

    ``options`` are ``{"label", "value"}`` pairs (the value is the record's id), the shape of
    the response's ``choices`` block.
    """

    def __init__(self, question: str, options: Sequence[Mapping[str, str]]) -> None:
        self.question = question
        self.options = [dict(o) for o in options]
        listed = "; ".join(f"{o['label']}" for o in self.options)
        super().__init__(f"{question} Options: {listed}. Nothing was prepared.")


class ErpRefusal(ErpError):
    """The ERP said no. ``refusal`` carries its own words, verbatim, for the model and the user."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal
        super().__init__(refusal.message)


class ErpUnavailable(ErpError):
    """The ERP could not be reached or kept failing (timeouts, 5xx) after the allowed retries."""


class ErpTimeout(ErpUnavailable):
    """The ERP did not answer within ``ERP_AGENT_ERP_TIMEOUT`` (after the allowed retries)."""


class ErpBadResponse(ErpUnavailable):
    """The ERP (or a proxy in front of it) answered with something that is not its API: an HTML
    error page, an empty or non-JSON body, a JSON shape the API never sends."""

    def __init__(self, status: int, url: str) -> None:
        self.status = status
        self.url = url
        super().__init__(
            f"The ERP answered something that is not its API (HTTP {status} from {url})"
        )


class ErpAuthenticationError(ErpError):
    """Sign-in failed: wrong password or key, or a disabled user. The message is the ERP's."""


class SignInThrottled(ErpAgentError):
    """Too many failed sign-ins for this account or client address; ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class ErpSessionExpired(ErpError):
    """The user's ERP session ended; they must sign in again."""


class ChannelError(ErpAgentError):
    """A channel request that cannot be served (MCP, the OpenAI-compatible API, the relay);
    the message says what to do and becomes the protocol's own error."""


class ApiKeyInvalid(ChannelError):
    """An unknown or revoked API key, or one whose ERP user the ERP no longer accepts."""


class RelayProtocolError(ChannelError):
    """Relay results that do not answer the turn's open calls: an unknown turn or call id, a
    replay, a reorder, another organisation's or user's turn, or an oversized result."""


class SignInRefused(ErpAgentError):
    """A sign-in that cannot go on, in words for the user: an SSO callback with a wrong or
    missing state, a code the ERP no longer accepts, a user without an allowed role.
    ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 400) -> None:
        self.status = status
        super().__init__(message)


# The exception type Frappe refuses a write to a changed record with (check_if_latest).
STALE_RECORD = "TimestampMismatchError"


class RefusalView(TypedDict):
    """A refusal as the model and the channels read it (``Refusal.as_dict``)."""

    message: str
    exc_type: str
    status: int
    messages: list[str]
    title: str | None


class Refusal:
    """What the ERP refused with: message text (HTML stripped), exception type, HTTP status."""

    __slots__ = ("exc_type", "message", "messages", "status", "title")

    def __init__(
        self,
        message: str,
        exc_type: str,
        status: int,
        messages: Sequence[str] = (),
        title: str | None = None,
    ) -> None:
        self.message = message
        self.exc_type = exc_type
        self.status = status
        self.messages = tuple(messages)
        self.title = title

    @property
    def stale(self) -> bool:
        """The record changed after the user read it (Frappe's TimestampMismatchError)."""
        return self.exc_type == STALE_RECORD

    def as_dict(self) -> RefusalView:
        return {
            "message": self.message,
            "exc_type": self.exc_type,
            "status": self.status,
            "messages": list(self.messages),
            "title": self.title,
        }

    def __repr__(self) -> str:
        return f"Refusal({self.exc_type}, {self.status}, {self.message!r})"
