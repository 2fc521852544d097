"""Settings: environment variables prefixed ``ERP_AGENT_``, or a TOML file named by
``ERP_AGENT_CONFIG``. The environment wins over the file. Secrets are never logged."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from erp_agent.errors import ConfigError

if TYPE_CHECKING:
    from erp_agent.documents.extract import ScanLimits

DEFAULT_ERP_URL = "http://127.0.0.1:8000"

ModelProvider = Literal["openai", "azure", "anthropic"]


class ModelSettings(BaseModel):
    """One model endpoint. ``provider`` picks the wire protocol: ``openai`` covers every
    OpenAI-compatible server (OpenAI, OpenRouter, DeepSeek, vLLM, Ollama, llama.cpp).
    See docs/configuration.md for each provider's values."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    provider: ModelProvider = "openai"
    model: str = Field(description="Model name; for Azure, the deployment's model name.")
    base_url: str | None = Field(None, description="Endpoint; None means the provider default.")
    api_key: SecretStr | None = None
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the key (secret by reference)."
    )
    api_version: str | None = Field(None, description="Azure only: the api-version query value.")
    deployment: str | None = Field(None, description="Azure only: the deployment in the path.")
    timeout: float = Field(60.0, gt=0, description="Seconds for one attempt.")
    max_retries: int = Field(3, ge=0, description="Retries on 429, 5xx and timeouts.")
    context_window: int = Field(128_000, gt=0)
    max_output_tokens: int = Field(
        4096, gt=0, description="Answer length limit when a call sets none (Anthropic needs one)."
    )
    stream_usage: bool = Field(
        True, description="Ask for a final usage chunk when streaming (stream_options)."
    )
    strict_tools: bool = Field(False, description="Send tool schemas in strict mode.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")

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


class SignInLimits(BaseModel):
    """Sign-in throttling, ``ERP_AGENT_SIGN_IN__*`` (see docs/security-model.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_minute_account: int = Field(5, ge=1, description="Failures per account per minute.")
    per_minute_address: int = Field(20, ge=1, description="Failures per client address per minute.")
    lockout_failures: int = Field(20, ge=1, description="Failures that lock an account or address.")
    lockout_minutes: float = Field(15, gt=0, description="The lockout's window and length.")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ERP_AGENT_", env_nested_delimiter="__", extra="ignore", frozen=True
    )

    erp_url: str = Field(
        DEFAULT_ERP_URL, description="Base URL of the ERP (default: the local demo ERP)."
    )
    connector: str = Field("erpnext", description="Which connector speaks to the ERP.")
    data_dir: str = Field("data", description="Where the embedded store and indexes live.")
    read_only: bool = Field(False, description="A read-only workspace: writes are never offered.")
    erp_timeout: float = Field(30.0, gt=0, description="Seconds to wait for one ERP call.")
    turn_deadline: float = Field(
        60.0, gt=0, description="Seconds one turn may take in all (model, ERP calls, retries)."
    )
    password: SecretStr | None = Field(None, description="Password for `--as USER` commands.")
    service_user: str | None = Field(
        None, description="Service user for role lookup and metadata only."
    )
    service_api_key: SecretStr | None = None
    service_api_secret: SecretStr | None = None
    reasoning_model: ModelSettings | None = Field(
        None, description="Chat model for the agent loop (JSON, or REASONING_MODEL__FIELD vars)."
    )
    vision_model: ModelSettings | None = Field(None, description="Model for images and scans.")
    embeddings_model: ModelSettings | None = Field(None, description="Embedding model.")
    tokens_per_minute: int | None = Field(
        None, gt=0, description="Tokens per minute shared by every model call in the process."
    )
    monthly_token_budget: int | None = Field(
        None, gt=0, description="Tokens each organisation may use per calendar month."
    )
    # Document scanning (erp_agent.documents):
    scan_max_bytes: int = Field(
        20_000_000, gt=0, description="Largest file a scan accepts, in bytes."
    )
    scan_max_pages: int = Field(20, gt=0, description="Most pages a scanned PDF may have.")
    scan_max_pixels: int = Field(
        60_000_000, gt=0, description="Largest image a scan decodes, in pixels (width × height)."
    )
    scan_ocr_timeout: float = Field(
        60.0, gt=0, description="Seconds Tesseract may spend on one page image."
    )
    # The HTTP server (erp_agent.server):
    session_key: SecretStr | None = Field(
        None,
        description="Fernet key encrypting ERP credentials of web sessions at rest; unset, a "
        "key is made per process (sessions end on restart).",
    )
    sign_in: SignInLimits = Field(
        default_factory=SignInLimits, description="Failed sign-ins allowed before throttling."
    )
    metrics_token: SecretStr | None = Field(
        None,
        description="Bearer token a Prometheus scraper sends to /metrics; unset, only an "
        "administrator's session may read it.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = os.environ.get("ERP_AGENT_CONFIG")
        if config_file:
            if not Path(config_file).is_file():
                raise ConfigError(
                    f"ERP_AGENT_CONFIG names {config_file}, which is not a file. "
                    "Point it at a TOML settings file or unset it."
                )
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(config_file)))
        return tuple(sources)


def scan_limits(settings: Settings) -> ScanLimits:
    from erp_agent.documents.extract import ScanLimits

    return ScanLimits(
        max_bytes=settings.scan_max_bytes,
        max_pages=settings.scan_max_pages,
        max_pixels=settings.scan_max_pixels,
        ocr_timeout=settings.scan_ocr_timeout,
    )


def load_settings() -> Settings:
    return Settings()
