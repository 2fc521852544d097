"""Channels beside the web app: MCP, the OpenAI-compatible API, and their API keys. Every one
goes through the same gateway, role policy, result shaping and write proposals."""
