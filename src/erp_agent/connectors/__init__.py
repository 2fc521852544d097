"""Connectors: the only code that speaks a system of record's native language."""
