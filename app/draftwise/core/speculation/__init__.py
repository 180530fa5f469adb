"""Choosing the speculative setup and remembering drafters that broke."""
