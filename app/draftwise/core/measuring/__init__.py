"""Measuring speculation on this machine: the runs, which start engines through core/launch and
so sit above it. What they find is kept in core/measurements (below core/launch).

- `arms`: one engine start per setup and round, with the stages' progress;
- `quick`: the quick measurement, a few setups; `sweep`: every setup the files allow;
- `tuning`: the engine's own settings; `learn`: measuring on the user's own prompts;
- `prompts`: the prompts measured on."""
