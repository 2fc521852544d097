"""The metric layer: one definition per business figure, computed exactly as the user.

``metrics.query`` (``erp_agent.tools.modules.metrics``) parses its arguments with
``request.parse_query``, computes with ``compute.MetricComputer`` (the connector's aggregate,
regrouped in Decimal where links, currencies or time grains need it) and shapes the answer —
rows, labelled columns, per-currency totals and the definition — with ``answer.answer``.
"""
