"""The store's tables (SQLAlchemy Core). Migrations must produce exactly this schema.

Dialect-neutral on purpose: JSON via the generic ``JSON`` type, datetimes via ``UTCDateTime``,
enums as plain strings (no CHECK constraints or PostgreSQL enum types to migrate later).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from erp_agent.store.column_types import UTCDateTime

# Named constraints, so that later migrations (SQLite batch mode in particular) can address them.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

conversations = Table(
    "conversations",
    metadata,
    Column("id", String, primary_key=True),
    Column("user", String, nullable=False),
    Column("org", String, nullable=False),
    Column("title", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index(None, "user", "updated_at"),
)

turns = Table(
    "turns",
    metadata,
    Column("id", String, primary_key=True),
    Column(
        "conversation_id",
        String,
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("seq", Integer, nullable=False),
    Column("user_message", Text, nullable=False),
    Column("status", String, nullable=False),
    Column("state", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("conversation_id", "seq"),
)

proposals = Table(
    "proposals",
    metadata,
    Column("id", String, primary_key=True),
    Column("user", String, nullable=False, index=True),
    Column("session_id", String, nullable=False),
    Column("org", String, nullable=False),
    Column("tool", String, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("payload_hash", String, nullable=False),
    Column("summary", Text, nullable=False),
    Column("diff", JSON, nullable=False),
    # none_as_null: a missing document/result/error is SQL NULL, not the JSON text 'null'.
    Column("document", JSON(none_as_null=True), nullable=True),
    Column("status", String, nullable=False, index=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("decided_at", UTCDateTime, nullable=True),
    Column("result", JSON(none_as_null=True), nullable=True),
    Column("error", JSON(none_as_null=True), nullable=True),
    # No foreign key: proposals also come from the API and MCP, outside any conversation.
    Column("conversation_id", String, nullable=True, index=True),
    Column("base_modified", String, nullable=True),
    Column("claimed_at", UTCDateTime, nullable=True),
    Column("checkpoint", JSON(none_as_null=True), nullable=True),
    Column("superseded_by", String, nullable=True),
    Column("warning", JSON(none_as_null=True), nullable=True),
    Column("projection", JSON(none_as_null=True), nullable=True),
    # The pinned business date it was prepared on (its confirm runs on it); NULL: the clock.
    Column("business_date", Date, nullable=True),
)

audit_events = Table(
    "audit_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user", String, nullable=False, index=True),
    Column("session_id", String, nullable=False),
    Column("org", String, nullable=False),
    Column("tool", String, nullable=False, index=True),
    Column("args_digest", String, nullable=False),
    Column("decision", String, nullable=False),
    Column("reason", Text, nullable=False),
    Column("latency_ms", Double, nullable=False),
    # No foreign key: refusals name proposal ids that may not exist.
    Column("proposal_id", String, nullable=True),
    Column("at", UTCDateTime, nullable=False, index=True),
    # The interaction log joins a turn's gateway decisions by this, not by a time window.
    Column("turn_id", String, nullable=True, index=True),
)

# What a conversation is about (last query, its result, documents, a pending question): one
# JSON document per conversation, read and replaced whole at each turn.
conversation_state = Table(
    "conversation_state",
    metadata,
    Column(
        "conversation_id",
        String,
        ForeignKey("conversations.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("state", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

results = Table(
    "results",
    metadata,
    Column("id", String, primary_key=True),
    Column("user", String, nullable=False),
    Column("tool", String, nullable=False),
    Column("entity", String, nullable=True),
    Column("title", Text, nullable=False),
    # The tool's data exactly as returned (one JSON document: written once, read whole).
    Column("data", JSON, nullable=False),
    Column("total_rows", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # The owner's results newest first; expiry sweeps by age.
    Index(None, "user", "created_at"),
    Index(None, "created_at"),
)

# The index of exported files (the files live under the data directory): who owns each, where
# it is, when it expires. Any worker serves a download from it, to its owner only.
exports = Table(
    "exports",
    metadata,
    Column("result_id", String, primary_key=True),
    Column("format", String, primary_key=True),
    Column("user", String, nullable=False),
    Column("path", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("mime", String, nullable=False),
    Column("size", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Index(None, "user"),
    Index(None, "expires_at"),
)

# Failed sign-ins, one row per failure and key ("account:<user>" / "address:<ip>"): counted by
# every worker, so throttling holds however many processes serve the app.
sign_in_failures = Table(
    "sign_in_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String, nullable=False),
    Column("at", UTCDateTime, nullable=False, index=True),
    Index(None, "key", "at"),
)

# What the ERP granted a user (per doctype: read/create/…; per report: may run), asked at sign-in
# and reused by that user's next sign-in with the same roles until ERP_AGENT_GRANTS_TTL passes.
# The key hashes the ERP, the user and their roles: one row never serves another user.
erp_grants = Table(
    "erp_grants",
    metadata,
    Column("key", String, primary_key=True),
    Column("user", String, nullable=False, index=True),
    Column("grants", JSON, nullable=False),
    Column("checked_at", UTCDateTime, nullable=False, index=True),
)

# Signed-in browsers: every web worker reads the same rows, so a cookie works on any of them.
web_sessions = Table(
    "web_sessions",
    metadata,
    Column("token_hash", String, primary_key=True),
    Column("session_id", String, nullable=False, index=True),
    Column("user", String, nullable=False, index=True),
    Column("org", String, nullable=False),
    Column("roles", JSON, nullable=False),
    Column("allowed_tools", JSON, nullable=False),
    Column("csrf", String, nullable=False),
    Column("credential", LargeBinary, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False, index=True),
)

# What an administrator changed at run time (model, policy, read-only, budgets): one JSON
# value per key, read by every worker.
admin_settings = Table(
    "admin_settings",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# The interaction log: one row per finished turn, with its true outcome and its token usage
# (the figures budgets and the usage chart are computed from).
interactions = Table(
    "interactions",
    metadata,
    Column("turn_id", String, primary_key=True),
    Column("conversation_id", String, nullable=False),
    Column("user", String, nullable=False, index=True),
    Column("org", String, nullable=False),
    Column("at", UTCDateTime, nullable=False, index=True),
    Column("message", Text, nullable=False),
    Column("model", String, nullable=False),
    Column("outcome", String, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("cached_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("tools", JSON, nullable=False),
    Column("latency_ms", Double, nullable=False),
    Column("shown", String, nullable=False, server_default=""),
    Column("rating", String, nullable=True),
    Column("comment", Text, nullable=True),
    Column("rated_at", UTCDateTime, nullable=True, index=True),
    # What the turn cost: cache writes (priced apart), and tokens × the model's price in
    # millionths of the price table's currency (NULL: the model has no price).
    Column("cache_write_tokens", Integer, nullable=False, server_default="0"),
    Column("cost_micros", BigInteger, nullable=True),
    Index(None, "org", "at"),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String, primary_key=True),
    Column("key_hash", String, nullable=False, unique=True),
    Column("kind", String, nullable=False),
    Column("user", String, nullable=False, index=True),
    Column("org", String, nullable=False, index=True),
    Column("label", Text, nullable=False),
    Column("credential", Text, nullable=True),
    Column("created_by", String, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
)

# Plans: what an organisation may use (modules, tool globs, channels, monthly tokens, how many
# subscriptions), enforced by the gateway after the ERP's permissions (gateway/plans.py).
plans = Table(
    "plans",
    metadata,
    Column("name", String, primary_key=True),
    Column("label", Text, nullable=False),
    Column("definition", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Which plan each organisation is on (an organisation with no row has the default plan).
org_plans = Table(
    "org_plans",
    metadata,
    Column("org", String, primary_key=True),
    Column("plan", String, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Questions that come back: the reading (tool calls) run on a schedule, as the user, delivered
# to the user's channels; alerts deliver only when their condition becomes true.
subscriptions = Table(
    "subscriptions",
    metadata,
    Column("id", String, primary_key=True),
    Column("user", String, nullable=False, index=True),
    Column("org", String, nullable=False),
    Column("title", Text, nullable=False),
    Column("question", Text, nullable=False),
    Column("reading", JSON, nullable=False),
    Column("schedule", String, nullable=False),
    Column("timezone", String, nullable=False),
    Column("condition", JSON(none_as_null=True), nullable=True),
    Column("channels", JSON, nullable=False),
    Column("status", String, nullable=False),
    Column("status_message", Text, nullable=False),
    Column("conversation_id", String, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("next_run_at", UTCDateTime, nullable=True),
    Column("last_run_at", UTCDateTime, nullable=True),
    Column("last_outcome", String, nullable=False),
    Column("last_value", JSON(none_as_null=True), nullable=True),
    Column("condition_met", Boolean, nullable=False),
    Column("failures", Integer, nullable=False),
    Index(None, "status", "next_run_at"),
)

# The credential a user's subscriptions run as while they are not signed in: an ERP API key
# pair, sealed with the session key (docs/security-model.md, "Subscriptions run as the user").
standing_credentials = Table(
    "standing_credentials",
    metadata,
    Column("user", String, primary_key=True),
    Column("credential", Text, nullable=False),
    Column("source", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# Each email or ERP notification of a subscription run: tried again with backoff until sent,
# or given up (and reported in the inbox) after the configured number of attempts.
deliveries = Table(
    "deliveries",
    metadata,
    Column("id", String, primary_key=True),
    Column("subscription_id", String, nullable=False, index=True),
    Column("user", String, nullable=False, index=True),
    Column("channel", String, nullable=False),
    Column("message", JSON, nullable=False),
    Column("status", String, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("reference", String, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime, nullable=True),
    Index(None, "status", "next_attempt_at"),
)

# The web app's inbox: deliveries of subscriptions, and notices about them (paused, no access,
# a delivery that could not be made).
inbox = Table(
    "inbox",
    metadata,
    Column("id", String, primary_key=True),
    Column("user", String, nullable=False),
    Column("subscription_id", String, nullable=True),
    Column("kind", String, nullable=False),
    Column("title", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("data", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("read_at", UTCDateTime, nullable=True),
    Index(None, "user", "created_at"),
)
