"""A signed-in user's session, as the gateway sees it."""

from __future__ import annotations

from dataclasses import dataclass, field

from erp_agent.connectors.credentials import Credential

# Sessions of an API key (MCP, the OpenAI-compatible API) have ids with this prefix. They cannot
# show a confirm button, so their proposals are confirmed by the same user in the web app.
CHANNEL_SESSION_PREFIX = "key_"
# Sessions of the ERP plugin's relay (relay/hub.py): a turn the plugin started for its user.
RELAY_SESSION_PREFIX = "relay_"


@dataclass
class Session:
    """Who is asking, with which ERP credential, and which tools they were granted at sign-in.

    ``allowed_tools`` is resolved once at sign-in from the role policy intersected with what the
    ERP grants this user; the gateway refuses any other tool, whoever names it.
    """

    id: str
    user: str
    credential: Credential = field(repr=False)
    roles: frozenset[str]
    org: str = "default"
    allowed_tools: frozenset[str] = frozenset()
    read_only: bool = False
    company: str | None = None
    # The user's own default company in the ERP (a User Default): used where one company must
    # be chosen (a report, a new document) instead of asking; never a filter on reads.
    default_company: str | None = None
    currency: str | None = None
    timezone: str = "UTC"
