"""What was measured, as data and stores: pure, below core/launch, which reads them to launch
a measured setup. Measuring itself — the runs that start engines — is core/measuring.

- `measurement`: one measurement's entry (`Combination`, `Measurement`, the noise rule);
- `measured`: the quick measurements' store and the rules auto applies from it;
- `sweep_record`: the sweeps' store; `tuned`: the engine settings a measurement kept;
- `live_figures`: the engine's own drafting figures, parsed and judged against the
  break-even (the chat's live watch uses them with no measurement running);
- `usage`, `usage_check`, `learned`: the user's own requests, and when they call for a
  measurement.

No process is started here."""
