"""A bespoke small-business database (not ERPNext's schema): tenants, branches, customers,
products, invoices with lines, payments and stock levels — for the agent's ``sql`` connector.

``mapping.yaml`` beside this file maps it to the agent's canonical entities.
"""
