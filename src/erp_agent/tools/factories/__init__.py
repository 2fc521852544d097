"""Tools generated from the catalog: entity operations, standard reports, approval workflows.

registry = ToolRegistry(catalog_tools(load_catalog()))
"""

from __future__ import annotations

from erp_agent.catalog import Catalog
from erp_agent.tools.base import Tool
from erp_agent.tools.factories.entity import entity_tool, entity_tools
from erp_agent.tools.factories.report import report_tool, report_tools
from erp_agent.tools.factories.workflow import workflow_tools


def catalog_tools(catalog: Catalog) -> list[Tool]:
    """Every generated tool: entity tools, then report tools, then workflow tools."""
    return [*entity_tools(catalog), *report_tools(catalog), *workflow_tools(catalog)]


__all__ = [
    "catalog_tools",
    "entity_tool",
    "entity_tools",
    "report_tool",
    "report_tools",
    "workflow_tools",
]
