"""Hosted mode: the agent runs here and the ERP plugin runs every ERP call as the user who
asked. The relay holds no ERP URL and no ERP credential and never connects to the ERP: each
connector call becomes a call specification the plugin executes (docs/channels.md)."""
