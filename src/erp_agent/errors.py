"""The one exception hierarchy of erp-agent.

Two branches under one root:

- ``ConfigError``: the package was misused or misconfigured (bad settings, a broken catalog, an
  unknown name asked for by code). Retrying will not help; the message says what to fix.
- runtime errors (``ErpError``, ``ModelError``, ``StoreError``): something outside our code failed
  while serving a request. Layers add their own subclasses under these branches.

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
        self.problems: tuple[str, ...] = (problems,) if isinstance(problems, str) else tuple(problems)
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
