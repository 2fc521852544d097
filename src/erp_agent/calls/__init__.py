"""A tool call's two ends, shared by every layer that makes or reads one: who is calling
(``session.Session``, with their ERP credential and granted tools) and what came back
(``outcome.Outcome``)."""
