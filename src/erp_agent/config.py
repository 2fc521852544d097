"""Settings: environment variables prefixed ``ERP_AGENT_``, or a TOML file named by
``ERP_AGENT_CONFIG``. The environment wins over the file. Secrets are never logged."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from erp_agent.errors import ConfigError

DEFAULT_ERP_URL = "http://127.0.0.1:8000"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ERP_AGENT_", extra="ignore", frozen=True)

    erp_url: str = Field(
        DEFAULT_ERP_URL, description="Base URL of the ERP (default: the local demo ERP)."
    )
    connector: str = Field("erpnext", description="Which connector speaks to the ERP.")
    erp_timeout: float = Field(30.0, gt=0, description="Seconds to wait for one ERP call.")
    password: SecretStr | None = Field(None, description="Password for `--as USER` commands.")
    service_user: str | None = Field(
        None, description="Service user for role lookup and metadata only."
    )
    service_api_key: SecretStr | None = None
    service_api_secret: SecretStr | None = None

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


def load_settings() -> Settings:
    return Settings()
