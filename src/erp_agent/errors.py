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

from collections.abc import Sequence


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
    """A chat or embedding model provider failed (providers extend this branch)."""


class StoreError(ErpAgentError):
    """Persistence failed: the conversation/proposal/result store or a search index."""


class ToolError(ErpAgentError):
    """A tool could not do what was asked; the message is shown to the model."""


class ToolInputError(ToolError):
    """The arguments were valid JSON but cannot be acted on (a no-op update, an action that is
    not available now); the message says what to change."""


class ErpRefusal(ErpError):
    """The ERP said no. ``refusal`` carries its own words, verbatim, for the model and the user."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal
        super().__init__(refusal.message)


class ErpUnavailable(ErpError):
    """The ERP could not be reached or kept failing (timeouts, 5xx) after the allowed retries."""


class ErpAuthenticationError(ErpError):
    """Sign-in failed: wrong password or key, or a disabled user. The message is the ERP's."""


class ErpSessionExpired(ErpError):
    """The user's ERP session ended; they must sign in again."""


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

    def as_dict(self) -> dict[str, object]:
        return {
            "message": self.message,
            "exc_type": self.exc_type,
            "status": self.status,
            "messages": list(self.messages),
            "title": self.title,
        }

    def __repr__(self) -> str:
        return f"Refusal({self.exc_type}, {self.status}, {self.message!r})"
