from frappe.model.document import Document  # type: ignore[import-not-found]


class ERPAgentSettings(Document):
    """Where the hosted erp-agent is, and the organisation's relay key (kept as a Password)."""
