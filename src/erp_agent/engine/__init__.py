"""The engine: one turn of the conversation, from the user's message to a structured answer."""
