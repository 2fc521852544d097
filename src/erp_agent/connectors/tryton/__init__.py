"""The Tryton connector (trytond over JSON-RPC); see connector.py."""
