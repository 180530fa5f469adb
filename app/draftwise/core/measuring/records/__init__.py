"""The measurements' data and stores, and the engine's live drafting figures: pure, below
core/launch, which reads them to launch a measured setup (see core/measuring/__init__.py)."""
