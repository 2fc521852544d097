"""The one settings object. Values come from, highest first: arguments, environment variables
prefixed ``ERP_AGENT_``, a TOML file named by ``ERP_AGENT_CONFIG``, then the defaults here.
docs/configuration.md is generated from this module (``python -m erp_agent.config_doc``);
every field needs a description. Secrets are never logged."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
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
        "variable; self-hosted ones default to an 8192-token context and a 300 s timeout.",
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
    context_window: int = Field(
        128_000, gt=0, description="Tokens the model reads at once (history is trimmed to fit)."
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
        description="Send tool schemas compact (first sentence of each description, no "
        "parameter prose, long enums left to the gateway's check); unset, they are compact "
        "when context_window is under 32768 tokens.",
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
        "keys must survive a restart); development only warns.",
    )
    session_hours: float = Field(12.0, gt=0, description="Hours a web session lasts after sign-in.")
    allowed_roles: list[str] = Field(
        default_factory=list,
        description="ERP roles allowed to use the agent, checked at sign-in and on every "
        "request; empty, every ERP user may (JSON list or comma-separated).",
    )
    trusted_proxies: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "::1"],
        description="Addresses or networks (CIDR) whose X-Forwarded-For/-Proto/-Host headers "
        "are honoured; from anyone else they are ignored.",
    )
    root_path: str = Field(
        "", description="Path prefix the proxy serves the agent under, e.g. /agent; empty: /."
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
        description="The callback URL registered with the client; unset, this server's own "
        "/api/auth/oauth/callback as the browser reached it.",
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
    connector: str = Field("erpnext", description="Which connector speaks to the ERP.")
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
        description="The web app's address as users reach it, for confirm links that MCP and "
        "OpenAI-API clients show; unset, the address a request came to.",
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

    @model_validator(mode="before")
    @classmethod
    def _model_shorthand(cls, data: object) -> object:
        """ERP_AGENT_MODEL (+ _BASE_URL, _API_KEY_ENV) fills in the reasoning model."""
        if not isinstance(data, dict) or not data.get("model"):
            return data
        if data.get("reasoning_model"):
            raise ConfigError(
                "Both ERP_AGENT_MODEL and ERP_AGENT_REASONING_MODEL are set; keep one of them."
            )
        table = {"model": data["model"]}
        if data.get("model_base_url"):
            table["base_url"] = data["model_base_url"]
        if data.get("model_api_key_env"):
            table["api_key_env"] = data["model_api_key_env"]
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


def with_model(
    settings: Settings,
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> Settings:
    """``settings`` with the reasoning model named on a command line (``--model``)."""
    table: dict[str, str] = {"model": spec}
    if base_url:
        table["base_url"] = base_url
    if api_key_env:
        table["api_key_env"] = api_key_env
    try:
        model = ModelSettings.model_validate(table)
    except ValueError as exc:
        raise ConfigError(f"--model {spec}: {_first_error(exc)}") from exc
    return settings.model_copy(update={"reasoning_model": model})


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            return str(found[0].get("msg", exc)).removeprefix("Value error, ")
    return str(exc)


def load_settings() -> Settings:
    return Settings()
