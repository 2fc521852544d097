"""Which connectors exist, and the active one. The engine asks here; it never imports one."""

from __future__ import annotations

from collections.abc import Callable

from erp_agent.connectors.base import Connector
from erp_agent.errors import ConfigError

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


def _load_builtin() -> None:
    if "erpnext" not in _FACTORIES:
        from erp_agent.connectors.frappe.connector import ERPNextConnector

        register("erpnext", ERPNextConnector)
    if "sql" not in _FACTORIES:
        register("sql", _sql)


def _sql(base_url: str, *, mapping: str | None = None, timeout: float = 30.0) -> Connector:
    """A bespoke database: ``base_url`` is its SQLAlchemy URL, ``mapping`` the mapping file."""
    from erp_agent.connectors.sql.connector import SQLConnector

    if not mapping:
        raise ConfigError(
            "The sql connector needs its mapping file: set ERP_AGENT_SQL_MAPPING to the YAML "
            "that maps the database's tables to entities (see docs/connectors.md)."
        )
    return SQLConnector(base_url, mapping=mapping, timeout=timeout)
