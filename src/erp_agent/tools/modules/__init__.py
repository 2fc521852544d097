"""Hand-written tool modules: each has a ``tools(...)`` function returning its tools."""
