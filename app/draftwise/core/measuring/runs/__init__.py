"""The measurement runs — arms, the quick measurement, the sweep — which start engines through
core/launch and so sit above it (see core/measuring/__init__.py)."""
