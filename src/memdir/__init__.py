"""memdir: filesystem-based memory for LLM agents."""
