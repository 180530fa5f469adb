"""Measuring speculation on this machine: the runs that measure it and the records they keep.

Two halves, on two sides of core/launch (the layers contract in pyproject.toml):

- `records/` — what a measurement is and what it found, as data: one measurement's entry
  (`measurement`: `Combination`, `Measurement`, the noise rule), the quick measurements'
  store and the rules auto applies from it (`measured`), the sweeps' store (`sweep_record`),
  and the engine's own drafting figures parsed and judged against the break-even
  (`live_figures`). Pure data, arithmetic and stores: no process is started here. It sits
  *below* core/launch, because the launch session reads it — `prepare` and `session` launch a
  measured setup — and the chat's live watch uses the figures with no measurement running.
- `runs/` — the measuring itself: `arms` (one engine start per setup and round, stages of
  them interleaved), `quick` (the quick measurement: a few setups) and `sweep` (every setup).
  They start engines through core/launch (`prepare`, `headless`, crash causes, engine fixes),
  so they sit *above* it, and hand their results to the caller, who files them in `records`.

So nothing cycles: launch imports records, runs import launch and records, and records
import neither (not even inside a function).
"""
