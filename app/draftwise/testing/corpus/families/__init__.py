"""Corpus families: one module per family, each with models() -> list[ModelSpec]."""
