"""The declarative catalog: canonical entities, modules, reports and each connector's native maps.

Everything here is data (YAML under ``data/`` and ``maps/``) validated once at start::

    catalog = load_catalog()
    invoice = catalog.entity("sales_invoice")
    native = catalog.native("erpnext", "sales_invoice")  # doctype, fieldnames, id patterns
"""

from erp_agent.catalog.catalog import Catalog
from erp_agent.catalog.entities import Entity, EntityKind, Module, Operation, Report
from erp_agent.catalog.fields import Field, FieldType, ParamType, ReportParam
from erp_agent.catalog.loader import PACKAGED_ROOT, load_catalog
from erp_agent.catalog.maps import (
    ConnectorMaps,
    EntityMap,
    FieldMap,
    ParamMap,
    ReportMap,
    Transform,
)
from erp_agent.catalog.metrics import Dimension, MeasureFunc, Metric, MetricFilter, Returns

__all__ = [
    "PACKAGED_ROOT",
    "Catalog",
    "ConnectorMaps",
    "Dimension",
    "Entity",
    "EntityKind",
    "EntityMap",
    "Field",
    "FieldMap",
    "FieldType",
    "MeasureFunc",
    "Metric",
    "MetricFilter",
    "Module",
    "Operation",
    "ParamMap",
    "ParamType",
    "Report",
    "ReportMap",
    "ReportParam",
    "Returns",
    "Transform",
    "load_catalog",
]
