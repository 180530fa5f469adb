"""Draftwise: run a local LLM with speculative decoding set up for you."""

__version__ = "0.1.0"
