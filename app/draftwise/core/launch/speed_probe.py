"""This computer's speed, measured with the engine: the probe that starts it.

Why here, at launch, and the rest in core/machine/speed.py: the probe model, the rate behind
its tokens a second, the record (`speed-probe.json`, one writer: `speed.measured_once`) and
the estimate are read by the planner, the hub's judge and the starters, all of which sit at
or below launch; starting an engine is the launch path's job alone (a LaunchSpec from
launch_spec, run by HeadlessLaunch, owned by core/processes: its process group, the
lifeline, the run file; asked over core/processes/loopback.py, never through a proxy).
core/machine may not import core/launch (the layers in pyproject.toml), so the part that
starts the engine lives here and hands its figure down to speed.py to keep. No argv, health
polling or HTTP client of its own: the probe is a launch like any other, with the probe's
model and the probe's settings.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import replace
from pathlib import Path

from draftwise.core import paths
from draftwise.core.engines import args as engine_args
from draftwise.core.launch import headless, launch_spec
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.machine import speed
from draftwise.core.processes import loopback

log = logging.getLogger(__name__)

# The probe's settings: a small context and one slot (the probe asks one short request at a
# time), on the CPU only (`-dev none`: a Vulkan build would pick its device; `-ngl 0`), without
# the CPU's extra buffers (`-nr`: AMX faults on some machines, and a probe that crashes
# measures nothing; on AVX2 the repacked Q4_K decodes no faster, bench/speed_estimate.py), at
# the engine's own default verbosity (`-lv 3`, info: the launch's trace level, llamacpp.VERBOSITY,
# is for the memory lines a plan is compared with; the probe's constants were measured without it).
PROBE_OPTIONS = tuple(engine_args.option(*o) for o in (("-lv", "3"), ("-c", "256"), ("-np", "1"), ("-dev", "none"),
                                                      ("-ngl", "0"), ("-nr",)))
TIMEOUT_S = 90.0
WARM_UP_TOKENS = 8  # the first request allocates the graphs: not counted


def probe_spec(binary: Path, model: Path) -> LaunchSpec:
    """The probe's launch: the raw engine on the probe model with PROBE_OPTIONS, on loopback,
    nothing to fall back to."""
    spec = launch_spec.llamacpp_launch(binary, model, launch_spec.NO_SPECULATION, port=launch_spec.any_free_port(),
                                       plan_options=PROBE_OPTIONS)
    return replace(spec, fallback_argv=None, fallback_options=None)


def probe_engine(binary: Path, *, model: Path | None = None, timeout: float = TIMEOUT_S) -> speed.Throughput | None:
    """The engine's own decoding speed on this processor: the probe model
    (speed.write_probe_model), PROBE_TOKENS tokens twice after a warm-up, the faster one's
    `predicted_per_second` turned into Q4_K bytes a second (speed.probe_rate). None when the
    engine did not start, answer or count in `timeout` seconds (the memory scan stands in)."""
    if not os.access(binary, os.X_OK):  # nothing to start: no 300 MB model written for it
        log.info("speed probe: %s is no program that runs", binary)
        return None
    own = model is None  # written here for this probe: removed after it (300 MB of disk)
    model = model or paths.cache_dir() / "speed-probe" / speed.PROBE_FILE
    if not model.is_file() or model.stat().st_size < speed.probe_model_bytes():
        speed.write_probe_model(model)
    deadline = time.monotonic() + timeout
    try:
        spec = probe_spec(binary, model)
        run = headless.HeadlessLaunch(spec)
        run.start()
        try:
            if not run.wait_ready(timeout):
                log.info("speed probe: the engine was not ready (%s)", run.stage)
                return None
            rates = []
            for n in (WARM_UP_TOKENS, speed.PROBE_TOKENS, speed.PROBE_TOKENS):
                left = max(1.0, deadline - time.monotonic())
                status, raw = loopback.request(spec.url, spec.api_key, "/completion", {
                    "prompt": "a", "n_predict": n, "ignore_eos": True, "cache_prompt": False}, left)
                if status != 200:
                    log.info("speed probe: the engine answered %s", status)
                    return None
                answer = json.loads(raw)
                rate = (answer.get("timings") or {}).get("predicted_per_second") if isinstance(answer, dict) else None
                if isinstance(rate, (int, float)) and rate > 0 and n == speed.PROBE_TOKENS:
                    rates.append(float(rate))
            if not rates:
                return None
            return speed.Throughput(speed.probe_rate(max(rates)), "engine", speed.cores())
        finally:
            run.stop()
    except (OSError, ValueError) as exc:
        log.info("speed probe failed: %s", exc)
        return None
    finally:
        if own:
            model.unlink(missing_ok=True)


def engine_rate(binary: Path, *, measure: bool = True) -> speed.Throughput | None:
    """This computer's rate for `binary`'s build: kept, else measured with the engine and
    kept (speed.measured_once: a busy figure is used, not kept). None when it is not kept and
    the engine did not measure it (or `measure` is False)."""
    return speed.measured_once(speed.record_key(binary), lambda: probe_engine(binary), measure=measure)


def throughput(binary: Path | None = None, *, measure: bool = True) -> speed.Throughput:
    """This computer's rate: measured with `binary` (kept per computer and engine build),
    else the memory scan (kept per computer). `measure=False` (a model is running and would
    share the processor) never starts the engine and keeps no new figure."""
    if binary is not None:
        tp = engine_rate(binary, measure=measure)
        if tp is not None:
            return tp
    return speed.memory_rate(measure=measure)
