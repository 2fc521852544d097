"""Chat model providers behind one interface (``ChatModel``), and the test doubles."""
