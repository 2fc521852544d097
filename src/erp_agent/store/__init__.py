"""Persistence behind one interface: conversations, turns, proposals, audit events.

SQLite is the embedded default; PostgreSQL is for scale. Workers are stateless: everything a
turn or a proposal needs lives here, so any process can continue it.
"""
