"""`draftwise measure MODEL`: how much faster speculation makes this model on this machine.

Runs the fixed prompt set with the chosen speculation and without it (core/measuring/quick.py),
prints tokens/s both ways, the ratio, acceptance and mean accepted length, the setup kept
(types, draft length, p-min), and records the result, which the next `plan`/`launch` and the
window use. A model with no drafter is measured with the n-gram types. `--forget`
drops the records of the model instead. Exit 0 measured, 1 the engine failed (crash
sentence printed), 2 bad input or a plan that does not fit, 130 interrupted (nothing
recorded, no engine left).
"""

from __future__ import annotations

import argparse
import signal
import threading

from draftwise.cli.common import UserError, add_request_options
from draftwise.cli.launch import planned_launch

EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "measure", help="measure the speed-up of speculation for a model (and remember it)",
        description="Generate a fixed prompt set with the chosen speculation and without it, tune the "
                    "draft length, print the speed-up and remember it for later launches.",
    )
    add_request_options(p)
    p.add_argument("--tokens", type=int, default=None,
                   help="tokens generated per prompt (default: from the noise of the first start; 128 for --sweep)")
    p.add_argument("--rounds", type=int, default=None,
                   help="rounds of the prompt set per arm (default: 2, and more only while the measurement "
                        "stays within a minute)")
    p.add_argument("--n-max", default=None,
                   help="draft lengths to try, comma-separated (default: a small set for the drafter's type)")
    p.add_argument("--sweep", action="store_true",
                   help="try every setup the engine and the files allow (types, combined types, draft lengths, "
                        "p-min), print the table and remember the best; several times longer")
    p.add_argument("--forget", action="store_true", help="drop this model's measurements (and sweeps) instead")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_measure)
    return p


def cmd_measure(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from draftwise.core.engines.spec_types import NGRAM_MEASURED
    from draftwise.core.launch import session
    from draftwise.core.machine import speed
    from draftwise.core.measuring import quick, sweep
    from draftwise.core.processes import orphans

    if args.forget:
        records = session.Records.load().measured
        n = records.forget(model=Path(args.model).expanduser())
        if records.problem:
            print(f"warning: {records.problem}", flush=True)
        print(f"Forgot {n} measurement{'s' if n != 1 else ''} of {Path(args.model).name}." if n
              else f"No measurement of {Path(args.model).name} was recorded.")
        return 0
    if (args.tokens is not None and args.tokens < 1) or (args.rounds is not None and args.rounds < 1):
        raise UserError("--tokens and --rounds must be at least 1.")
    try:
        n_values = tuple(int(x) for x in args.n_max.split(",")) if args.n_max else None
    except ValueError as exc:
        raise UserError(f"--n-max takes whole numbers separated by commas, not {args.n_max!r}.") from exc
    if n_values is not None and any(n < 1 for n in n_values):
        raise UserError("--n-max values must be at least 1.")
    for report in orphans.stop_orphans():
        print(report.message, flush=True)
    # The launch session, as `launch` plans it (the selected devices, the remembered fixes and
    # rung, the broken drafters), except that an old measurement does not leave the drafter out:
    # this one measures it again. A fix found on the way is recorded (the arms would otherwise
    # crash the same way every time).
    engine, machine, planned = planned_launch(args, ignore_measurements=True)
    # n-gram measured because no drafter was found: auto turns it on only where it pays.
    ngram_on_trial = quick.ngram_request(planned.prepared) is not None
    if ngram_on_trial:
        # No drafter found: n-gram speculation is what auto could turn on, so measure its types.
        print(f"No drafter found for {planned.prepared.model.path.name}: measuring n-gram speculation "
              f"({', '.join(NGRAM_MEASURED if args.sweep else quick.QUICK_NGRAM_TYPES)}).", flush=True)
        args.ngram = True
        engine, machine, planned = planned_launch(args, ignore_measurements=True)
    records, fixes, prepared = planned.records.measured, planned.records.fixes, planned.prepared
    for problem in planned.problems:
        print(f"warning: {problem}", flush=True)
    if not planned.fixes.default:
        print(f"  - after an earlier crash with this engine: {planned.fixes.label()}", flush=True)
    if not prepared.plan.fits:
        raise UserError(" ".join(str(r) for r in prepared.plan.reasons[-1:]) or "The model does not fit this machine.")
    if not prepared.spec.argv:
        why = " ".join(str(n) for n in prepared.spec.notes[-1:])
        raise UserError(f"There is no speculation to measure for {prepared.model.path.name}. {why}".strip())
    # The product's own quick measurement (no length or rounds set here) keeps to the minute.
    own = args.tokens is None and args.rounds is None and not args.sweep
    settings = quick.MeasureSettings(tokens=args.tokens or quick.MeasureSettings.tokens,
                                     rounds=args.rounds or quick.MeasureSettings.rounds, n_max_values=n_values,
                                     tokens_from_noise=args.tokens is None and not args.sweep,
                                     within_s=quick.MINUTE_S if own else None)
    here = speed.speed_here(prepared.model.path, machine, engine.binary)  # the kept figure: nothing measured
    if args.sweep:
        eta = sweep.estimated_seconds(prepared, settings, quick.engine_types_of(engine.binary), tokens_per_s=here)
        print(f"Sweeping every setup for {prepared.model.path.name} (at most about {eta:.0f} s; each arm loads "
              "the model, and a dimension stops widening once it falls beyond the noise).", flush=True)
    else:
        eta = quick.estimated_seconds(prepared, settings, quick.engine_types_of(engine.binary), tokens_per_s=here)
        print(f"Measuring {prepared.model.path.name} with {quick.what_is_drafting(prepared.spec)} "
              f"and without it (about {eta:.0f} s; each arm loads the model).", flush=True)

    cancel = threading.Event()

    def on_signal(signum, _frame) -> None:
        cancel.set()

    signals = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {sig: signal.signal(sig, on_signal) for sig in signals}

    def show(p: quick.Progress) -> None:
        if not args.json:
            print(f"  [{p.step}/{p.steps}] {p.text}", flush=True)

    run = sweep.sweep if args.sweep else quick.measure
    try:
        result = run(prepared, engine.binary, machine, backend=engine.backend, gpus=machine.gpus,
                     settings=settings, cancel=cancel, report=show, fixes=fixes, caps=planned.engine.caps,
                     tuned=records.tuned())
    except quick.Cancelled:
        print("Measurement stopped; nothing was recorded.", flush=True)
        return EXIT_INTERRUPTED
    except quick.MeasureError as exc:
        print(f"measurement failed: {exc.message}", flush=True)
        if exc.cause is not None:
            print(f"  next step: {exc.cause.next_step}", flush=True)
            if exc.cause.evidence:
                print(f"  engine said: {exc.cause.evidence}", flush=True)
        return EXIT_FAILED
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    store = records.sweeps() if args.sweep else records
    try:
        records.keep(result)
    except OSError as exc:
        print(f"warning: could not record the measurement ({exc.strerror or exc}).", flush=True)
    for problem in dict.fromkeys((records.problem, store.problem)):
        if problem:
            print(f"warning: {problem}", flush=True)
    kept = {"engine_settings": result.tuned.to_json() if result.tuned is not None else None}
    if args.sweep:
        best = result.measurement()
        if args.json:
            print(json.dumps({**result.to_json(), "best": best.to_json() if best else None, **kept}, indent=2))
        else:
            print(render_sweep(result, on_trial=ngram_on_trial))
            print(render_tuned(result.tuned))
        return 0
    if args.json:
        print(json.dumps({**result.to_json(), "slower": result.slower, "faster": result.faster, **kept}, indent=2))
        return 0
    print(render(result, on_trial=ngram_on_trial))
    print(render_tuned(result.tuned))
    return 0


def render(m, *, on_trial: bool = False) -> str:
    """The measurement in lines; `on_trial`: n-gram speculation measured for a model with no
    drafter, which auto runs only where it pays (`Measurement.pays`)."""
    acc = f"{m.acceptance * 100:.0f} %" if m.acceptance is not None else "—"
    mean = f"{m.mean_length:.2f}" if m.mean_length is not None else "—"
    verdict = "slower" if m.slower else "faster" if m.faster else "about the same (within the noise)"
    # With per-prompt figures the speed-up is their geometric mean, and "with" none's tokens/s times it.
    geo = f"geometric mean over {len(m.kinds)} prompts; " if m.per_prompt else ""
    lines = [
        f"with {m.what}: {m.tokens_per_s_with:.1f} tokens/s",
        f"without speculation: {m.tokens_per_s_without:.1f} tokens/s",
        f"speed-up: {m.ratio:.2f}× ({geo}{verdict}; noise ±{m.noise * 100:.0f} %)",
        f"acceptance: {acc}, mean accepted length: {mean}",
    ]
    if m.n_max is not None and m.tried:
        tried = ", ".join(f"{n}: {tps:.1f}" for n, tps in m.tried)
        lines.append(f"draft length kept: {m.n_max} (tokens/s per length tried: {tried})")
    # "kept" only where auto runs it (`Measurement.runs`; this output speaks of an automatic
    # drafter, left out when slower: the last line), else it was only the fastest tried.
    kept = m.runs(automatic=True, on_trial=on_trial)
    if m.setup is not None and on_trial and not m.pays:
        lines.append(f"fastest setup: {m.setup.label()}; not faster than none beyond the noise, so auto leaves "
                     "n-gram speculation off")
    elif m.setup is not None and not kept:
        lines.append(f"fastest setup: {m.setup.label()}; slower than none beyond the noise")
    elif m.setup is not None:
        lines.append(f"setup kept: {m.setup.label()} (what auto runs from now on)")
    lines += per_prompt_table(m, kept=kept)
    lines.append(f"({m.prompts} prompts × {m.tokens} tokens, {m.seconds:.0f} s; recorded for the next launch)")
    if m.slower and not on_trial:  # n-gram on trial was never on: nothing is left out
        lines.append("An automatic drafter is left out from now on; `draftwise measure --forget MODEL` undoes this.")
    return "\n".join(lines)


def per_prompt_table(m, *, kept: bool = True) -> list[str]:
    """Each setup's speed-up on each prompt against none, and their geometric mean (what the
    choice ranks by: core/measuring/choice.py), fastest first; the rule's choice marked, as kept
    or (not `kept`: auto does not run it) as the fastest tried."""
    from draftwise.core.measuring.choice import geometric_mean as _geomean

    if not m.per_prompt or not m.kinds:
        return []
    width = max(len(s.label()) for s, _r in m.per_prompt) + 2
    heads = [k[:9] for k in m.kinds]
    lines = ["", f"speed-up against none, per prompt (geometric mean first; * {'kept' if kept else 'the choice, not run'}):",
             f"{'setup':{width}} {'mean':>6} " + " ".join(f"{h:>9}" for h in heads)]
    ranked = sorted(m.per_prompt, key=lambda row: -_geomean(row[1]))
    for setup, ratios in ranked:
        mark = "*" if setup == m.setup else " "
        lines.append(f"{setup.label():{width - 1}}{mark} {_geomean(ratios):5.2f}× "
                     + " ".join(f"{r:8.2f}×" for r in ratios))
    return lines


def render_sweep(sw, *, on_trial: bool = False) -> str:
    """The sweep's table: every setup tried, fastest first, and what auto runs from now on.
    Where it ran more than one drafter, every drafter's row names its file. `on_trial`: as
    `render`'s (a drafter's best is kept unless slower; only n-gram on trial needs to pay)."""
    from draftwise.core.speculation.setup import drafter_file

    best = sw.best
    own = drafter_file(sw.combination.drafter) if any(r.setup.drafter_key for r in sw.rows) else None
    lines = [f"without speculation: {sw.stages_base_tokens_per_s or sw.base_tokens_per_s:.1f} tokens/s; "
             f"{sw.base_tokens_per_s:.1f} in the final (noise ±{sw.base_noise * 100:.0f} %)", "",
             f"{'setup':44} {'tokens/s':>9} {'speed-up':>8} {'noise':>6} {'accept':>7} {'mean len':>8} "
             f"{'final':>8}  note"]
    lines.append("-" * len(lines[-1]))
    for row in sorted(sw.rows, key=lambda r: -r.tokens_per_s):
        acc = f"{row.acceptance * 100:.0f} %" if row.acceptance is not None else "—"
        mean = f"{row.mean_length:.2f}" if row.mean_length is not None else "—"
        final = f"{row.final_tokens_per_s:.1f}" if row.final_tokens_per_s is not None else ""
        note = "best" if row is best else ("widening stopped here" if row.stopped else "")
        lines.append(f"{row.setup.label(own):44} {row.tokens_per_s:9.1f} {sw.ratio(row):7.2f}× {row.noise * 100:5.0f}% "
                     f"{acc:>7} {mean:>8} {final:>8}  {note}".rstrip())
    lines.append("")
    m = sw.measurement()
    if m is None:
        lines.append("No setup was measured.")
    elif m.slower:
        lines.append(f"Every setup was slower than none (best {m.ratio:.2f}×): auto starts without speculation "
                     "from now on (a drafter you chose stays).")
    elif on_trial and not m.pays:
        lines.append(f"The best setup, {best.setup.label(own)}, is not faster than none beyond the noise "
                     f"({m.ratio:.2f}×, ±{m.noise * 100:.0f} %): auto turns no n-gram speculation on for it.")
    else:
        lines.append(f"Kept: {best.setup.label(own)} ({m.ratio:.2f}×) — auto runs it from now on; "
                     "`draftwise measure --forget MODEL` undoes this.")
    lines.append(f"({len(sw.rows) + 1} setups × {sw.prompts} prompts × {sw.tokens} tokens, {sw.seconds:.0f} s)")
    return "\n".join(lines)


def render_tuned(t) -> str:
    """The settings stage's table (tuned.Tuned): each set of settings tried, its tokens/s
    written and read, and what auto passes from now on, with why."""
    from draftwise.core.measurements import tuned
    from draftwise.core.speculation.setup import NONE

    if t is None:
        return "Engine settings: none applies to this engine and device (or your own arguments set them)."
    # The quick measurement measures them without speculation (core/measuring/quick.py).
    on = "without speculation" if t.on == NONE.label() else f"on {t.on}"
    lines = ["", f"Engine settings, measured {on} (tokens/s written and read; a request of "
                 f"{tuned.REFERENCE_PROMPT} prompt tokens and {tuned.REFERENCE_ANSWER} answer tokens decides):",
             f"{'settings':28} {'written':>8} {'read':>8} {'request':>8} {'final':>8}  note"]
    lines.append("-" * len(lines[-1]))
    for row in t.rows:
        note = row.fault or ("kept" if row.settings == t.settings else "widening stopped here" if row.stopped else "")
        final = f"{row.final.decode:.1f}" if row.final is not None else ""
        lines.append(f"{row.settings.label():28} {row.speed.decode:8.1f} {row.speed.prompt:8.0f} "
                     f"{row.speed.seconds():7.2f}s {final:>8}  {note}".rstrip())
    lines.append("")
    kept = t.settings.label() if not t.settings.default else "the engine's own settings"
    lines.append(f"Kept: {kept} — auto passes it from now on; `draftwise measure --forget MODEL` undoes this.")
    lines += [f"  - {note}" for note in t.notes()]
    return "\n".join(lines)
