"""A small Frappe-compatible system of record for demos and tests.

It speaks a faithful subset of the Frappe/ERPNext REST API over HTTP. The agent never imports
this package; it talks to it over HTTP like it would to a real ERPNext site.
"""
