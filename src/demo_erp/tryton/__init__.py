"""A real Tryton (trytond from PyPI) as a second demo system of record.

``instance`` creates a database, activates the modules and serves it with ``trytond`` on a
free port; ``seed`` fills it through proteus (Tryton's own client library) with two companies
in two currencies, parties, products, invoices in every state, a sale, a purchase, stock
moves and users with different rights. Both run in their own processes: trytond keeps
process-wide state (its pool, its configuration) that must not leak into the agent or tests.
"""
