"""Serving the whole library through one engine in router mode (`draftwise serve`).

- library.py: which GGUF files are models to serve, and their ids;
- preset.py: one preset section per model, from the launch session's argv;
- together.py: how many models stay loaded at once, so any set fits (`--models-max`);
- serve_plan.py: the whole plan, and the router's command.
"""
