"""The HTTP face of the demo ERP: Frappe's /api/resource and /api/method endpoints."""
