"""Frappe hooks for erp_agent_plugin (the chat page and settings ship as module files)."""

app_name = "erp_agent_plugin"
app_title = "ERP Agent"
app_publisher = "erp-agent"
app_description = "erp-agent inside ERPNext: every ERP call runs as the signed-in user."
app_email = "maintainers@erp-agent.invalid"
app_license = "Apache-2.0"
required_apps = ["frappe"]

# The chat page is a desk page (/app/erp-agent-chat); the settings are a single doctype.
add_to_apps_screen = [
    {
        "name": "erp_agent_plugin",
        "title": "ERP Agent",
        "route": "/app/erp-agent-chat",
        "has_permission": "erp_agent_plugin.api.can_use",
    }
]
