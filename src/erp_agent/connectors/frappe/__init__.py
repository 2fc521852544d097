"""The ERPNext / Frappe connector: a native REST client and the canonical mapping on top."""
