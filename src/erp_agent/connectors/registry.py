"""Which connectors exist, and the active one. The engine asks here; it never imports one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from erp_agent.connectors.base import Connector
from erp_agent.errors import ConfigError

if TYPE_CHECKING:
    from erp_agent.config import Settings

Factory = Callable[..., Connector]
_FACTORIES: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    _FACTORIES[name] = factory


def available() -> list[str]:
    _load_builtin()
    return sorted(_FACTORIES)


def create(name: str, **options: object) -> Connector:
    """A connector by name (``erpnext``), built with its options (``base_url=…``)."""
    _load_builtin()
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigError(
            f"Unknown connector {name!r}. Available: {', '.join(sorted(_FACTORIES))}. "
            "Set ERP_AGENT_CONNECTOR to one of them."
        )
    return factory(**options)


def from_settings(settings: Settings) -> Connector:
    """The connector the settings name, with the options that connector takes."""
    from erp_agent.connectors.credentials import Credential

    options: dict[str, object] = {"base_url": settings.erp_url, "timeout": settings.erp_timeout}
    if settings.site_dir and settings.connector == "erpnext":
        from erp_agent.catalog import load_catalog

        options["catalog"] = load_catalog(site=settings.site_dir)  # the site's field maps too
    if settings.connector == "tryton":
        # Every call runs as the signed-in user: Tryton gets no service credential.
        options["database"] = settings.tryton_database
    elif settings.connector == "sql":
        options["mapping"] = settings.sql_mapping
        if settings.sql_session_key is not None:
            options["session_key"] = settings.sql_session_key.get_secret_value()
    elif settings.service_user and settings.service_api_key and settings.service_api_secret:
        options["service"] = Credential.token(
            settings.service_user,
            settings.service_api_key.get_secret_value(),
            settings.service_api_secret.get_secret_value(),
        )
    return create(settings.connector, **options)


def _load_builtin() -> None:
    if "erpnext" not in _FACTORIES:
        from erp_agent.connectors.frappe.connector import ERPNextConnector

        register("erpnext", ERPNextConnector)
    if "sql" not in _FACTORIES:
        register("sql", _sql)
    if "tryton" not in _FACTORIES:
        register("tryton", _tryton)


def _tryton(
    base_url: str, *, database: str | None = None, timeout: float = 30.0, **_: object
) -> Connector:
    """A Tryton server: ``base_url`` is trytond's URL, ``database`` its database name."""
    from erp_agent.connectors.tryton.connector import TrytonConnector

    return TrytonConnector(base_url, database=database, timeout=timeout)


def _sql(
    base_url: str,
    *,
    mapping: str | None = None,
    timeout: float = 30.0,
    session_key: str | None = None,
) -> Connector:
    """A bespoke database: ``base_url`` is its SQLAlchemy URL, ``mapping`` the mapping file."""
    from erp_agent.connectors.sql.connector import SQLConnector

    if not mapping:
        raise ConfigError(
            "The sql connector needs its mapping file: set ERP_AGENT_SQL_MAPPING to the YAML "
            "that maps the database's tables to entities (see docs/connectors.md)."
        )
    return SQLConnector(base_url, mapping=mapping, timeout=timeout, session_key=session_key)
