"""The memory plan, and reading back what the engine really allocated."""
