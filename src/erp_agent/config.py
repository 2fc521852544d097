"""The one settings object. Values come from, highest first: arguments, environment variables
prefixed ``ERP_AGENT_``, a TOML file named by ``ERP_AGENT_CONFIG``, then the defaults here.
docs/configuration.md is generated from this module (``python -m erp_agent.config_doc``);
every field needs a description. Secrets are never logged."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from erp_agent.errors import ConfigError

if TYPE_CHECKING:
    from erp_agent.documents.extract import ScanLimits

ENV_PREFIX = "ERP_AGENT_"
DEFAULT_ERP_URL = "http://127.0.0.1:8000"
MINILM_DIM = 384  # the offline embedder's width (retrieval.embeddings checks it matches)
ModelProvider = Literal["openai", "azure", "anthropic"]


class ModelSettings(BaseModel):
    """One model endpoint. ``provider`` picks the wire protocol: ``openai`` covers every
    OpenAI-compatible server (OpenAI, OpenRouter, DeepSeek, vLLM, Ollama, llama.cpp).
    ``model`` may name a preset (``ollama:qwen2.5:7b``), and the whole setting may be that one
    string. See docs/configuration.md for each provider's values."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    provider: ModelProvider = Field(
        "openai",
        description="Wire protocol: openai (any OpenAI-compatible server), azure, anthropic.",
    )
    model: str = Field(
        description="Model name as the provider spells it, optionally after a preset "
        "(ollama:qwen2.5:7b; see Presets below); Azure: for usage records."
    )
    preset: str | None = Field(
        None,
        description="The kind of server, set from the model's prefix (ollama, vllm, llamacpp, "
        "lmstudio, openai-compatible, openai, azure, anthropic): its default URL and key "
        "variable; the self-hosted ones (ollama, vllm, llamacpp, lmstudio) default to a 300 s "
        "timeout and, unless their model list says otherwise, an 8192-token context.",
    )
    base_url: str | None = Field(None, description="Endpoint; None means the provider default.")
    api_key: SecretStr | None = Field(
        None, description="The key itself (for a secrets manager that injects it)."
    )
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the key (secret by reference)."
    )
    api_version: str | None = Field(None, description="Azure only: the api-version query value.")
    deployment: str | None = Field(None, description="Azure only: the deployment in the path.")
    timeout: float = Field(60.0, gt=0, description="Seconds for one attempt.")
    max_retries: int = Field(3, ge=0, description="Retries on 429, 5xx and timeouts.")
    context_window: int | None = Field(
        None,
        gt=0,
        description="Tokens the model reads at once (history is trimmed to fit); unset, what "
        "the endpoint's model list says (OpenRouter, Together, vLLM, LM Studio and most "
        "gateways list it), else 128000 for a hosted endpoint and 8192 for a self-hosted "
        "preset.",
    )
    max_output_tokens: int = Field(
        4096, gt=0, description="Answer length limit when a call sets none (Anthropic needs one)."
    )
    stream_usage: bool = Field(
        True, description="Ask for a final usage chunk when streaming (stream_options)."
    )
    strict_tools: bool = Field(False, description="Send tool schemas in strict mode.")
    compact_tools: bool | None = Field(
        None,
        description="Send tool schemas compact (each description cut to its first sentence, "
        "no parameter prose; every enum kept); unset, they are compact when the context "
        "window is under 32768 tokens.",
    )
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    tool_role: bool | None = Field(
        None,
        description="Whether the server takes role 'tool' messages; unset, it is tried, and if "
        "the server refuses the role, tool results go as delimited user messages from then on.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_preset(cls, data: object) -> object:
        from erp_agent.models import presets

        if isinstance(data, str):
            data = {"model": data}
        return presets.apply(data) if isinstance(data, dict) else data

    @property
    def local(self) -> bool:
        """A self-hosted server (named by a preset such as ollama: or vllm:)."""
        from erp_agent.models import presets

        return presets.is_local(self.preset)

    @property
    def window(self) -> int:
        """The context window: as set, else the default for the kind of endpoint (the model
        list of the endpoint, read by the provider at its first call, may say better)."""
        from erp_agent.models import presets

        if self.context_window is not None:
            return self.context_window
        return presets.LOCAL_WINDOW if self.local else presets.HOSTED_WINDOW

    def key(self) -> str | None:
        """The API key: given directly, or read from the variable ``api_key_env`` names."""
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_env:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise ConfigError(
                    f"The model key is read from ${self.api_key_env}, which is not set. "
                    f"Set {self.api_key_env} or give api_key in the model settings."
                )
            return value
        return None


class ModelPrice(BaseModel):
    """One model's price per million tokens (``ERP_AGENT_PRICES``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: float = Field(ge=0, description="Per million prompt tokens not read from a cache.")
    completion: float = Field(ge=0, description="Per million completion tokens.")
    cached: float | None = Field(
        None, ge=0, description="Per million prompt tokens read from the provider's cache."
    )
    cache_write: float | None = Field(
        None, ge=0, description="Per million prompt tokens written to the provider's cache."
    )


class Group(BaseModel):
    """A group of settings: a TOML table, and environment variables ``ERP_AGENT_`` +
    ``env_prefix`` + the field name (``ERP_AGENT_<GROUP>__<FIELD>`` works for every group)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    env_prefix: ClassVar[str | None] = None  # None: only the nested ``<GROUP>__`` names
    title: ClassVar[str] = ""


class SignInLimits(Group):
    """Sign-in throttling (see docs/security-model.md for how failures are counted)."""

    title = "Sign-in throttling"

    per_minute_account: int = Field(
        5, ge=1, description="Failed sign-ins per account per minute before HTTP 429."
    )
    per_minute_address: int = Field(
        20, ge=1, description="Failed sign-ins per client address per minute before HTTP 429."
    )
    lockout_failures: int = Field(
        20, ge=1, description="Failures within the lockout window that lock an account or address."
    )
    lockout_minutes: float = Field(
        15, gt=0, description="The lockout window, and so the longest lockout, in minutes."
    )


class ScanSettings(Group):
    """Document scanning limits (erp_agent.documents)."""

    env_prefix = "SCAN_"
    title = "Document scanning"

    max_bytes: int = Field(
        20_000_000, gt=0, description="Largest file a scan accepts, in bytes (uploads are cut off)."
    )
    max_pages: int = Field(20, gt=0, description="Most pages a scanned PDF may have.")
    max_pixels: int = Field(
        60_000_000,
        gt=0,
        description="Largest image a scan decodes, width × height (against decompression bombs).",
    )
    ocr_timeout: float = Field(
        60.0, gt=0, description="Seconds Tesseract may spend on one page image."
    )
    max_aspect: float = Field(
        30.0,
        ge=1,
        description="Longest side over shortest an image or PDF page may have (a till receipt "
        "is about 15); longer strips are refused before they are decoded.",
    )
    max_memory_mb: int = Field(
        1024,
        ge=384,
        description="Memory (address space, MiB) of the worker process that reads one scan, "
        "and of each Tesseract run in it; one image step may hold half of what is left after "
        "the worker's own 192.",
    )
    max_cpu_seconds: int = Field(
        120,
        ge=1,
        description="CPU seconds the worker process reading one scan, and each Tesseract run "
        "in it, may use.",
    )
    timeout: float = Field(
        300.0, gt=0, description="Seconds one scan may take in all; then its worker is stopped."
    )
    workers: int = Field(
        2,
        ge=1,
        description="Scans read at the same time, each in its own worker process; more wait. "
        "All scans together hold at most workers × max_memory_mb.",
    )


class RetrievalSettings(Group):
    """The search index, its embedder and reranker, and the record sync."""

    env_prefix = ""
    title = "Search index and record sync"

    index_url: str | None = Field(
        None,
        description="The search index: sqlite:///PATH or a postgresql:// DSN; unset, "
        "index.sqlite in the data directory. sync, serve, demo and knowledge all use it.",
    )
    index_pool_size: int = Field(
        10,
        ge=1,
        description="Connections each process keeps open to a PostgreSQL index at most: the "
        "searches of one web worker run at once up to this many, the rest wait for one.",
    )
    index_tenant: str = Field("default", description="Tenant (organisation) the CLI indexes for.")
    embeddings: Literal["minilm", "openai", "none"] = Field(
        "minilm",
        description="Embedder: minilm (offline, bundled), openai (any /embeddings endpoint) or "
        "none (keyword search only).",
    )
    embeddings_url: str | None = Field(
        None, description="Base URL of the /embeddings endpoint (embeddings = openai)."
    )
    embeddings_model: str | None = Field(
        None, description="Embedding model name at that endpoint (embeddings = openai)."
    )
    embeddings_dim: int = Field(
        MINILM_DIM, gt=0, description="Vector width of that model (embeddings = openai)."
    )
    embeddings_api_key: SecretStr | None = Field(
        None, description="Key for the embeddings endpoint."
    )
    reranker: Literal["off", "onnx", "http"] = Field(
        "off", description="Reranker: off, onnx (a local cross-encoder) or http (a /rerank API)."
    )
    reranker_path: str | None = Field(
        None, description="Folder of the ONNX cross-encoder (reranker = onnx)."
    )
    reranker_url: str | None = Field(
        None, description="Base URL of the rerank API (reranker = http)."
    )
    reranker_model: str | None = Field(None, description="Model name at the rerank API.")
    reranker_api_key: SecretStr | None = Field(None, description="Key for the rerank API.")
    sync_user: str | None = Field(None, description="ERP user the record sync reads as.")
    sync_password: SecretStr | None = Field(None, description="That user's password.")
    sync_interval: float = Field(300.0, gt=0, description="Seconds between background delta syncs.")


class EngineSettings(Group):
    """Limits of one turn of the agent loop."""

    env_prefix = ""
    title = "The agent loop"

    turn_deadline: float = Field(
        60.0,
        gt=0,
        description="Seconds one whole turn may take (model calls, ERP calls and their retries); "
        "then the user gets what was found so far and a message naming what it waited for. "
        "Unset and with a self-hosted reasoning model (a local preset): 600.",
    )
    max_rounds: int = Field(10, ge=1, description="Model calls one turn may make.")
    history_budget_tokens: int = Field(
        6000, gt=0, description="Tokens of earlier conversation sent with a question."
    )
    context_budget_tokens: int = Field(
        1200, gt=0, description="Tokens of knowledge-base passages added to a question."
    )
    today: dt.date | None = Field(
        None,
        description="The date the agent takes as today (for demos and evals); unset, the clock.",
    )


class ServerSettings(Group):
    """The HTTP server: who may sign in, how long a session lasts, the proxy in front."""

    env_prefix = ""
    title = "The HTTP server"

    mode: Literal["development", "production"] = Field(
        "development",
        description="production refuses to start without session_key (sessions and stored "
        "keys must survive a restart) or public_url (links and the sign-on redirect are "
        "never made from request headers); development only warns.",
    )
    session_hours: float = Field(12.0, gt=0, description="Hours a web session lasts after sign-in.")
    allowed_roles: list[str] = Field(
        default_factory=list,
        description="ERP roles allowed to use the agent, checked at sign-in and on every "
        "request; empty, every ERP user may (JSON list or comma-separated).",
    )
    trusted_proxies: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "::1"],
        description="Addresses or networks (CIDR) whose X-Forwarded-For/-Proto/-Prefix headers "
        "are honoured (and -Host, when forwarded_host is on); from anyone else they are ignored.",
    )
    forwarded_host: bool = Field(
        False,
        description="Take the host links are made with from a trusted proxy's X-Forwarded-Host "
        "(only if the proxy sets it itself, never passing the client's on); never used for "
        "the single sign-on redirect. Prefer ERP_AGENT_PUBLIC_URL.",
    )
    root_path: str = Field(
        "",
        description="Path prefix the proxy serves the agent under, e.g. /agent; empty: /. "
        "A trusted proxy's X-Forwarded-Prefix header wins over it. Every route, cookie, "
        "redirect, link and the web app's calls hold under it.",
    )
    hsts_seconds: int = Field(
        31_536_000,
        ge=0,
        description="Strict-Transport-Security max-age sent on HTTPS responses; 0 sends none.",
    )
    password_sign_in: bool = Field(
        True, description="Offer sign-in with ERP user (email or username) and password."
    )
    api_key_sign_in: bool = Field(
        True, description="Offer sign-in with the user's ERP API key and secret."
    )


class OAuthSettings(Group):
    """Single sign-on through the ERP's OAuth2 / OpenID Connect provider (Frappe's)."""

    env_prefix = "OAUTH_"
    title = "Single sign-on (OAuth2 / OpenID Connect)"

    client_id: str | None = Field(
        None,
        description="Client ID of the OAuth Client registered in the ERP; unset, no SSO button.",
    )
    client_secret: SecretStr | None = Field(
        None, description="That client's secret (a confidential client); unset, PKCE alone."
    )
    scopes: str = Field("openid all", description="Scopes asked for, space-separated.")
    erp_public_url: str | None = Field(
        None,
        description="The ERP's URL as browsers reach it (the authorize page); unset, erp_url.",
    )
    redirect_url: str | None = Field(
        None,
        description="The callback URL registered with the client; unset, /api/auth/sso/"
        "callback under public_url (or, in development, on the host the request came to; never "
        "a forwarded host).",
    )
    refresh_margin_seconds: float = Field(
        120.0,
        ge=0,
        description="An access token this close to expiry is refreshed before the request.",
    )


class RetentionSettings(Group):
    """How long what users asked is kept, and who may read it. 0 days keeps forever."""

    env_prefix = "RETENTION_"
    title = "Retention and deletion"

    conversations_days: int = Field(
        90,
        ge=0,
        description="Days a conversation (its questions, answers, state) is kept after "
        "its last turn.",
    )
    interaction_log_days: int = Field(
        90, ge=0, description="Days a row of the interaction log (admin log, usage) is kept."
    )
    results_days: int = Field(
        30, ge=0, description="Days a stored tool result (tables, charts, exports' data) is kept."
    )
    exports_days: int = Field(
        7, ge=0, description="Days an exported file (CSV, XLSX, PDF) is kept in the data directory."
    )
    purge_interval_hours: float = Field(
        24.0, gt=0, description="Hours between purges while the server runs (one at start)."
    )
    question_text_roles: list[str] = Field(
        default_factory=lambda: ["System Manager"],
        description="ERP roles that see users' question text in the admin console's log; others "
        "see that a question was asked, not its words.",
    )


class SmtpSettings(Group):
    """The mail server subscriptions are emailed through (docs/subscriptions.md)."""

    env_prefix = "SMTP_"
    title = "Email (SMTP)"

    host: str | None = Field(
        None, description="SMTP server host; unset, subscriptions are not delivered by email."
    )
    port: int = Field(25, ge=1, le=65535, description="SMTP server port (587 with STARTTLS).")
    username: str | None = Field(None, description="User to authenticate as; unset, none.")
    password: SecretStr | None = Field(None, description="That user's password.")
    starttls: bool = Field(False, description="Upgrade the connection with STARTTLS.")
    ssl: bool = Field(False, description="Connect over TLS from the start (port 465).")
    sender: str = Field(
        "erp-agent@localhost", description="The From address of every email the agent sends."
    )
    timeout: float = Field(15.0, gt=0, description="Seconds to wait for the mail server.")


class SubscriptionSettings(Group):
    """Questions that come back: digests on a schedule and alerts on a condition."""

    env_prefix = "SUBSCRIPTIONS_"
    title = "Subscriptions"

    tick_seconds: float = Field(
        60.0,
        ge=0,
        description="Seconds between looks for due subscriptions and deliveries to retry (by "
        "`erp-agent worker --beat` on the queue, else by the web server); 0 turns it off.",
    )
    alert_schedule: str = Field(
        "*/15 * * * *",
        description="How often an alert's condition is checked when it names no schedule "
        "(cron, in the user's time zone).",
    )
    max_per_user: int = Field(20, ge=1, description="Active subscriptions one user may have.")
    delivery_attempts: int = Field(
        5,
        ge=1,
        description="Tries of an email or ERP notification before it is given up and reported "
        "in the user's inbox.",
    )
    retry_seconds: float = Field(
        60.0,
        gt=0,
        description="Wait before the second try of a delivery; each later wait is four times "
        "the one before.",
    )
    failures_before_pause: int = Field(
        5,
        ge=1,
        description="Runs in a row that fail (the ERP down, an unexpected error) before a "
        "subscription is paused with a message instead of being tried again.",
    )


class LogSettings(Group):
    """The server's log: format, level, and whether question text may appear in it."""

    env_prefix = "LOG_"
    title = "Logs"

    format: Literal["text", "json"] = Field(
        "text", description="text (one readable line) or json (one object per line)."
    )
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="The least severe level written."
    )
    questions: bool = Field(
        False,
        description="Write users' question text into turn log lines; off, only its length. "
        "Secrets are masked either way.",
    )


GROUPS: dict[str, type[Group]] = {}  # field name in Settings -> its group, filled below


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore", frozen=True
    )

    # The ERP and the workspace
    erp_url: str = Field(
        DEFAULT_ERP_URL, description="Base URL of the ERP (default: the local demo ERP)."
    )
    connector: str = Field(
        "erpnext", description="Which connector speaks to the ERP (erpnext, sql or tryton)."
    )
    tryton_database: str | None = Field(
        None,
        description="The tryton connector's database name on the trytond at ERP_AGENT_ERP_URL "
        "(unset: the last part of that URL, as in http://host:8000/erp).",
    )
    sql_mapping: str | None = Field(
        None,
        description="The sql connector's mapping file (YAML); ERP_AGENT_ERP_URL is then the "
        "database URL (sqlite:///file, mysql+pymysql://…, postgresql+psycopg://…).",
    )
    sql_session_key: SecretStr | None = Field(
        None,
        description="Key that signs the sql connector's sign-in sessions; give every worker the "
        "same one (unset: a key per process, so sign-ins last until it restarts).",
    )
    erp_timeout: float = Field(30.0, gt=0, description="Seconds to wait for one ERP call.")
    erp_proxy_read_timeout: float = Field(
        0.0,
        ge=0,
        description="Seconds a request may still reach the ERP and be committed after the agent "
        "stopped waiting for it: the read timeout of a reverse proxy in front of the ERP "
        "(nginx's default 60, a Frappe bench's 120), or the ERP's own request timeout when "
        "longer; 0 when the agent talks to the ERP directly. A write whose answer did not "
        "arrive is decided only after ERP_AGENT_ERP_TIMEOUT, this and "
        "ERP_AGENT_ERP_WRITE_GRACE have passed.",
    )
    erp_write_grace: float = Field(
        30.0,
        ge=0,
        description="Seconds added to that wait before the ERP is asked whether an unanswered "
        "write happened (clock differences, a slow commit, a proxy whose timeout is not known); "
        "until then the proposal shows 'unknown — checking' and cannot be confirmed again.",
    )
    grants_ttl: float = Field(
        300.0,
        ge=0,
        description="Seconds a user's ERP permissions, read at sign-in, are reused for that "
        "user's next sign-in with the same roles (0: read them at every sign-in). They only "
        "choose the tools offered: the ERP still checks every call.",
    )
    master_data_ttl: float = Field(
        120.0,
        ge=0,
        description="Seconds a signed-in session reuses the names it looked up in the ERP's "
        "master data (customers, items, warehouses…), read as that user (0: look up every turn).",
    )
    data_dir: str = Field("data", description="Where the embedded store, indexes and exports live.")
    read_only: bool = Field(
        False, description="A read-only workspace: write tools are never offered or executed."
    )
    site_dir: str | None = Field(
        None,
        description="A deployment's own folder: catalog/ entries (custom fields, doctypes, "
        "metrics, reports) merged over the packaged catalog and validated at start; see "
        "docs/extending.md.",
    )
    password: SecretStr | None = Field(
        None, description="Password for `--as USER` commands (else they ask)."
    )
    service_user: str | None = Field(
        None,
        description="Service user for role lookup and metadata only; unset, the user's own "
        "credential is used.",
    )
    service_api_key: SecretStr | None = Field(None, description="The service user's API key.")
    service_api_secret: SecretStr | None = Field(None, description="The service user's API secret.")
    # Models (see "Model providers" below)
    model: str | None = Field(
        None,
        description="Shorthand for the reasoning model: PRESET:NAME, e.g. ollama:qwen2.5:7b, or "
        "openai-compatible:NAME with ERP_AGENT_MODEL_BASE_URL.",
    )
    model_base_url: str | None = Field(
        None, description="Endpoint of the model ERP_AGENT_MODEL names (wins over a preset's)."
    )
    model_api_key_env: str | None = Field(
        None,
        description="Name of the variable holding the key of the model ERP_AGENT_MODEL or "
        "--model names (secret by reference).",
    )
    model_context_window: int | None = Field(
        None,
        gt=0,
        description="Context window of the model ERP_AGENT_MODEL or --model names (any "
        "reasoning_model field may be set beside them the same way, e.g. "
        "ERP_AGENT_REASONING_MODEL__STRICT_TOOLS).",
    )
    model_timeout: float | None = Field(
        None, gt=0, description="Seconds for one attempt of the model ERP_AGENT_MODEL names."
    )
    model_max_retries: int | None = Field(
        None, ge=0, description="Retries of the model ERP_AGENT_MODEL names."
    )
    model_compact_tools: bool | None = Field(
        None, description="Compact tool schemas for the model ERP_AGENT_MODEL names."
    )
    reasoning_model: ModelSettings | None = Field(
        None, description="Chat model for the agent loop; unset, the offline planner answers."
    )
    vision_model: ModelSettings | None = Field(
        None, description="Model that transcribes scanned page images; unset, Tesseract OCR."
    )
    tokens_per_minute: int | None = Field(
        None, gt=0, description="Tokens per minute shared by every model call in the process."
    )
    monthly_token_budget: int | None = Field(
        None, gt=0, description="Tokens each organisation may use per calendar month (UTC)."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Price per million tokens of each model, by the name the provider reports "
        "(a glob like gpt-4.1* matches several): {prompt, cached, completion, cache_write}; "
        "cached (cache reads) and cache_write default to prompt. Each turn's cost is stored in "
        "the interaction log at the price of its day; a model with no price costs nothing "
        "and is shown as unpriced.",
    )
    cost_currency: str = Field("USD", description="The currency the prices are in.")
    default_plan: str | None = Field(
        None,
        description="The plan of every organisation an administrator assigned none (its "
        "name in the admin console's plans); unset, such organisations are not limited.",
    )
    # The HTTP server (erp_agent.server)
    session_key: SecretStr | None = Field(
        None,
        description="Fernet key(s) sealing ERP credentials of web sessions and stored model "
        "keys at rest; several, comma-separated, rotate: the first seals, all open, and what "
        "an older one sealed is re-sealed at start. Unset, a key is made per process "
        "(sessions end on restart; refused when mode = production).",
    )
    # Many workers (docs/deployment.md):
    database_url: str | None = Field(
        None,
        description="The store's database (conversations, turns, proposals, audit, web "
        "sessions, admin settings, the interaction log); unset, a SQLite file in data_dir. "
        "For several workers: postgresql://user:password@host/db.",
    )
    redis_url: str | None = Field(
        None,
        description="Redis shared by every worker: token-rate gate, progress fan-out, response "
        "cache, sign-in counters (e.g. redis://127.0.0.1:6379/0); unset, each process keeps "
        "its own.",
    )
    redis_prefix: str = Field(
        "erp-agent",
        description="Prefix of every Redis key, so that deployments can share one Redis.",
    )
    response_cache_seconds: float = Field(
        0.0,
        ge=0,
        description="How long the answer to a new conversation's question may be served again "
        "to users with the same organisation and permissions (exact or reworded question; "
        "dropped sooner when the delta sync sees its entities change); 0 turns the cache off.",
    )
    queue_url: str | None = Field(
        None,
        description="Broker of the background-turn queue (Celery), e.g. redis://127.0.0.1:6379/1 "
        "or amqp://guest:guest@127.0.0.1:5672//; unset, turns run in the web process.",
    )
    queue_name: str = Field(
        "erp-agent-turns", description="The queue background turns are sent to and read from."
    )
    queue_max_attempts: int = Field(
        3, ge=1, description="Tries of a background turn whose worker died before it is stopped."
    )
    scheduled_sync_seconds: float = Field(
        0.0,
        ge=0,
        description="Seconds between delta syncs of ERP records into the search index, run on "
        "the queue as the sync user by `erp-agent worker --beat` (e.g. 300); 0 turns it off.",
    )
    scheduled_knowledge_seconds: float = Field(
        0.0,
        ge=0,
        description="Seconds between re-indexes of the knowledge base (unchanged documents "
        "are skipped), run on the queue by `erp-agent worker --beat` (e.g. 3600); 0 turns it "
        "off.",
    )
    metrics_token: SecretStr | None = Field(
        None,
        description="Bearer token a Prometheus scraper sends to /metrics; unset, only an "
        "administrator's session may read it.",
    )
    # Channels (erp_agent.channels, erp_agent.relay):
    public_url: str | None = Field(
        None,
        description="The web app's address as users reach it (e.g. https://agent.example.com/"
        "agent), for confirm links that MCP and OpenAI-API clients show and the single sign-on "
        "redirect; required in production mode. Unset, the address a request came to.",
    )
    api_key: SecretStr | None = Field(
        None, description="A user API key for `erp-agent mcp --as USER` instead of a password."
    )
    relay_max_result_bytes: int = Field(
        5_000_000, gt=0, description="Largest relay result (one call's JSON) the relay accepts."
    )
    # Groups
    sign_in: SignInLimits = Field(
        default_factory=SignInLimits, description="Failed sign-ins allowed before throttling."
    )
    scan: ScanSettings = Field(default_factory=ScanSettings, description="Document scanning.")
    retrieval: RetrievalSettings = Field(
        default_factory=RetrievalSettings, description="Search index and record sync."
    )
    engine: EngineSettings = Field(
        default_factory=EngineSettings, description="Limits of one turn."
    )
    server: ServerSettings = Field(default_factory=ServerSettings, description="The HTTP server.")
    oauth: OAuthSettings = Field(default_factory=OAuthSettings, description="Single sign-on.")
    retention: RetentionSettings = Field(
        default_factory=RetentionSettings, description="Retention and deletion."
    )
    log: LogSettings = Field(default_factory=LogSettings, description="The server's log.")
    smtp: SmtpSettings = Field(default_factory=SmtpSettings, description="Email (SMTP).")
    subscriptions: SubscriptionSettings = Field(
        default_factory=SubscriptionSettings, description="Subscriptions."
    )

    @model_validator(mode="before")
    @classmethod
    def _model_shorthand(cls, data: object) -> object:
        """ERP_AGENT_MODEL (+ _BASE_URL, _API_KEY_ENV, _CONTEXT_WINDOW, _TIMEOUT, …) fills in
        the reasoning model; fields set as ERP_AGENT_REASONING_MODEL__<FIELD> go with it."""
        if not isinstance(data, dict):
            return data
        # A model named on the command line replaces the configured model's endpoint.
        command_line = bool(data.pop(COMMAND_LINE_MODEL, False))
        given = data.get("reasoning_model")
        if isinstance(given, ModelSettings):
            given = {k: getattr(given, k) for k in given.model_fields_set}
        if not data.get("model"):
            if isinstance(given, dict) and not given.get("model"):
                names = ", ".join(f"ERP_AGENT_REASONING_MODEL__{k.upper()}" for k in given)
                raise ConfigError(
                    f"{names} is set but no model is named: set ERP_AGENT_MODEL=PRESET:NAME "
                    "(or ERP_AGENT_REASONING_MODEL__MODEL), or give --model."
                )
            return data
        if isinstance(given, str):
            given = {"model": given}
        if command_line and given:
            given = {k: v for k, v in given.items() if k not in ENDPOINT_FIELDS}
        if given and given.get("model"):
            raise ConfigError(
                "Both ERP_AGENT_MODEL and ERP_AGENT_REASONING_MODEL name a model; keep one of "
                "them (other ERP_AGENT_REASONING_MODEL__<FIELD> settings may stay beside "
                "ERP_AGENT_MODEL)."
            )
        table = model_table(
            str(data["model"]),
            base_url=data.get("model_base_url"),
            api_key_env=data.get("model_api_key_env"),
            tuning={k: data.get(f"model_{k}") for k in SHORTHAND_TUNING},
            others=given or {},
        )
        return {**data, "reasoning_model": table}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [
            FlatKeys(settings_cls, init_settings),
            env_settings,
            GroupEnvSource(settings_cls),
        ]
        config_file = os.environ.get("ERP_AGENT_CONFIG")
        if config_file:
            if not Path(config_file).is_file():
                raise ConfigError(
                    f"ERP_AGENT_CONFIG names {config_file}, which is not a file. "
                    "Point it at a TOML settings file or unset it."
                )
            toml = TomlConfigSettingsSource(settings_cls, toml_file=Path(config_file))
            sources.append(FlatKeys(settings_cls, toml))
        return tuple(sources)


def _groups() -> dict[str, type[Group]]:
    if not GROUPS:
        for name, info in Settings.model_fields.items():
            kind = info.annotation
            if isinstance(kind, type) and issubclass(kind, Group):
                GROUPS[name] = kind
    return GROUPS


def env_names(group_name: str, field: str) -> list[str]:
    """Every environment variable that sets ``group_name.field``, the documented one first."""
    group = _groups()[group_name]
    nested = f"{ENV_PREFIX}{group_name}__{field}".upper()
    if group.env_prefix is None:
        return [nested]
    return [f"{ENV_PREFIX}{group.env_prefix}{field}".upper(), nested]


class FlatKeys(PydanticBaseSettingsSource):
    """``scan_max_bytes = …`` (a TOML key or an argument) means ``scan.max_bytes``: the names
    settings had before they were grouped keep working. Applied per source, so precedence
    between sources holds; within one source a grouped value wins."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource):
        super().__init__(settings_cls)
        self.inner = inner

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ nests the inner source's values

    def __call__(self) -> dict[str, Any]:
        data = dict(self.inner())
        for name, group in _groups().items():
            if group.env_prefix is None:
                continue
            for field in group.model_fields:
                flat = f"{group.env_prefix}{field}".lower()
                if flat not in data or flat in Settings.model_fields:
                    continue
                value = data.pop(flat)
                current = data.get(name)
                if isinstance(current, BaseModel):
                    continue  # a whole group given as an object wins
                merged = dict(current or {})
                merged.setdefault(field, value)
                data[name] = merged
        return data


class GroupEnvSource(PydanticBaseSettingsSource):
    """Reads a group's own variable names (``ERP_AGENT_SCAN_MAX_BYTES``); the nested names
    (``ERP_AGENT_SCAN__MAX_BYTES``) come through pydantic's own environment source."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every group at once

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, group in _groups().items():
            if group.env_prefix is None:
                continue
            for field, info in group.model_fields.items():
                variable = env_names(name, field)[0]
                raw = os.environ.get(variable)
                if raw is not None:
                    found.setdefault(name, {})[field] = _env_value(raw, info)
        return found


def _env_value(raw: str, info: FieldInfo) -> Any:
    """A list or table from one variable: JSON, or (lists) comma-separated words."""
    origin = getattr(info.annotation, "__origin__", None)
    if origin in (list, tuple, set, frozenset, dict):
        try:
            return json.loads(raw)
        except ValueError:
            if origin is dict:
                raise ConfigError(
                    f'A table setting takes JSON, e.g. {{"a": 1}}; got {raw!r}.'
                ) from None
            return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def scan_limits(settings: Settings) -> ScanLimits:
    from erp_agent.documents.extract import ScanLimits

    return ScanLimits(
        max_bytes=settings.scan.max_bytes,
        max_pages=settings.scan.max_pages,
        max_pixels=settings.scan.max_pixels,
        ocr_timeout=settings.scan.ocr_timeout,
        max_aspect=settings.scan.max_aspect,
        max_memory=settings.scan.max_memory_mb * 2**20,
        max_cpu_seconds=settings.scan.max_cpu_seconds,
        timeout=settings.scan.timeout,
        workers=settings.scan.workers,
    )


def engine_settings(settings: Settings) -> EngineSettings:
    """The loop's limits. The turn deadline, unless set, is longer when the reasoning model is
    self-hosted: a CPU-bound model may need a minute per step, and a turn takes several."""
    from erp_agent.models.presets import LOCAL_TURN_SECONDS

    engine = settings.engine
    model = settings.reasoning_model
    if "turn_deadline" in engine.model_fields_set or model is None or not model.local:
        return engine
    return engine.model_copy(update={"turn_deadline": LOCAL_TURN_SECONDS})


COMMAND_LINE_MODEL = "model_from_command_line"  # an argument of load_settings, never stored
# Model settings that may be given beside ERP_AGENT_MODEL / --model (ERP_AGENT_MODEL_<NAME>).
SHORTHAND_TUNING = ("context_window", "timeout", "max_retries", "compact_tools")
# What names the endpoint: a model named on its own (ERP_AGENT_MODEL, --model) replaces these,
# and every other model setting (timeout, window, retries, schemas…) goes with it.
ENDPOINT_FIELDS = frozenset(
    ["provider", "model", "preset", "base_url", "api_key", "api_key_env", "api_version",
     "deployment", "headers"]
)  # fmt: skip


def model_table(
    spec: str,
    *,
    base_url: object = None,
    api_key_env: object = None,
    tuning: dict[str, object] | None = None,
    others: dict[str, object] | ModelSettings | None = None,
) -> dict[str, object]:
    """The reasoning model's table for a model named on its own (``spec`` = PRESET:NAME): its
    endpoint as given, the tuning given beside it, and the other fields of ``others`` (the
    configured model's settings) that do not name an endpoint."""
    if isinstance(others, ModelSettings):
        others = {k: getattr(others, k) for k in others.model_fields_set}
    table: dict[str, object] = {
        k: v for k, v in (others or {}).items() if k not in ENDPOINT_FIELDS and v is not None
    }
    table |= {k: v for k, v in (tuning or {}).items() if v is not None}
    table["model"] = spec
    if base_url:
        table["base_url"] = base_url
    if api_key_env:
        table["api_key_env"] = api_key_env
    return table


def _setting_name(loc: tuple[object, ...]) -> str:
    """The environment variable of a field's path (``reasoning_model.timeout`` →
    ERP_AGENT_REASONING_MODEL__TIMEOUT)."""
    parts = [str(p) for p in loc if not isinstance(p, int)]
    if not parts:
        return "settings"
    if len(parts) > 1 and parts[0] in _groups():
        return env_names(parts[0], parts[1])[0]
    return ENV_PREFIX + "__".join(parts).upper()


def load_settings(
    *,
    model: str | None = None,
    base_url: str | None = None,
    options: dict[str, str] | None = None,
) -> Settings:
    """The settings, or a ConfigError of one line naming the setting that is wrong. ``model``
    (with ``base_url`` and model ``options``, e.g. from ``--model-setting``) is a model named
    on the command line: it replaces the configured model's endpoint, and the other model
    settings (ERP_AGENT_REASONING_MODEL__<FIELD>, ERP_AGENT_MODEL_<NAME>) go with it."""
    given: dict[str, Any] = {}
    if model is not None:
        given = {"model": model, COMMAND_LINE_MODEL: True}
        if base_url:
            given["model_base_url"] = base_url
    try:
        settings = Settings(**given)
    except ValidationError as exc:
        raise ConfigError(_one_setting(exc, _setting_name)) from None
    model_settings = settings.reasoning_model
    if not options or model_settings is None:
        return settings
    table = {k: getattr(model_settings, k) for k in model_settings.model_fields_set}
    try:
        merged = ModelSettings.model_validate({**table, **options})
    except ValidationError as exc:
        raise ConfigError(_one_setting(exc, lambda loc: f"--model-setting {loc[-1]}")) from None
    return settings.model_copy(update={"reasoning_model": merged})


def _one_setting(exc: ValidationError, name_of: Callable[[tuple[Any, ...]], str]) -> str:
    """The first problem of ``exc`` in one line, naming the setting as ``name_of`` says."""
    first = exc.errors()[0] if exc.errors() else None
    if first is None:
        return str(exc)
    loc = tuple(first.get("loc", ()))
    message = str(first.get("msg", exc)).removeprefix("Value error, ")
    value = first.get("input")
    got = f" (got {value!r})" if isinstance(value, (str, int, float)) else ""
    return f"{name_of(loc) if loc else 'settings'}: {message}{got}."
