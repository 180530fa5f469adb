"""`draftwise launch`'s part in learning from use (core/measuring/learn.py), and
`draftwise prompts`: the kept prompts listed or deleted.

Before the engine starts: take in the prompts the engine logged since the last launch, then,
when the user's requests of the last launches call for it and the computer is idle, measure the
kept setup again on their prompts, print why and what it found, and have the launch planned
again with it. While the engine serves: keep each finished request's figures under the model
and the setup running (core/measurements/usage.py) and, with the user's consent, the prompts
the engine logs (core/measurements/prompt_log.py).
"""

from __future__ import annotations

import signal
import threading


def learn_before_launch(planned) -> bool:
    """True when a measurement on the user's prompts was recorded (plan the launch again)."""
    from draftwise.core.machine import idle
    from draftwise.core.measuring import arms, learn

    cancel = threading.Event()

    def on_signal(signum, _frame) -> None:
        cancel.set()

    def show(p: arms.Progress) -> None:
        print(f"  [{p.step}/{p.steps}] {p.text}", flush=True)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        outcome = learn.before_launch(planned, planned.records.usage, idle=idle.idle, cancel=cancel,
                                      report=show, on_start=lambda note: print(f"learning: {note}", flush=True))
    except arms.Cancelled:
        print("learning: stopped; nothing was recorded.", flush=True)
        return False
    except arms.MeasureError as exc:
        print(f"warning: measuring on your prompts failed: {exc.message}", flush=True)
        return False
    except OSError as exc:
        print(f"warning: could not record the measurement on your prompts ({exc.strerror or exc}).", flush=True)
        return False
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if outcome.measurement is None:
        if outcome.note is not None:
            print(f"learning: {outcome.note}", flush=True)
        return False
    print(f"learning: {outcome.measurement.summary()}", flush=True)
    return True


def consent() -> bool:
    """Whether the user allows keeping their prompts (the window's box, `Settings.keep_prompts`),
    as the settings file says now: asked at each ingestion, so unticking it in the window
    while `launch` runs is heard at once."""
    from draftwise.core import settings as settings_mod

    return settings_mod.load().settings.keep_prompts


def ingest_prompts(planned) -> None:
    """Take in what the engine logged for this model since the last launch (one that ended
    without its last ingestion, or a served instance): before learning, which measures on it."""
    from draftwise.core.measurements import prompt_log

    store = planned.records.usage
    if store is None:
        return
    try:
        prompt_log.ingest(store, planned.prepared.model.path, keep=consent())
    except OSError as exc:
        print(f"warning: your logged prompts could not be kept ({exc.strerror or exc}).", flush=True)


def keeper_for(planned, launch=None):
    """The keeper of this launch's requests' figures, under its model, engine, machine and
    setup; and, when its engine logs the prompts into Draftwise's folder (`launch.prompt_log`),
    of those prompts."""
    from draftwise.core.measurements import prompt_log, usage
    from draftwise.core.measuring import learn

    store = planned.records.usage
    prompts = (prompt_log.Ingest(store, planned.prepared.model.path, consent)
               if launch is not None and launch.prompt_log is not None and store is not None else None)
    return usage.Keeper(learn.usage_key(planned), store, prompts=prompts)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "prompts", help="the prompts kept on this computer to measure speed on them (the chat's and every "
                        "request's through the API): list or delete",
        description="With your consent (the chat's box \"Keep my last prompts on this computer\", on by default), "
                    "Draftwise keeps each model's last prompts on this computer (never sent anywhere) so that "
                    "speculation can be measured again on your own work: the window chat's, and every request "
                    "any program sends the engines Draftwise starts (the engine logs them into a folder Draftwise "
                    "empties as it keeps the last ones). List them, or delete them and that folder.",
    )
    p.add_argument("model", nargs="?", default=None, help="only this model's (default: every model's)")
    p.add_argument("--clear", action="store_true", help="delete them, and the prompts the engine logged")
    p.set_defaults(func=cmd_prompts)


def cmd_prompts(args) -> int:
    from pathlib import Path

    from draftwise.core import identity
    from draftwise.core.launch import session
    from draftwise.core.measurements import prompt_log, usage

    records = session.Records.load().usage
    model = Path(args.model).expanduser() if args.model else None
    if args.clear:
        gone = records.forget_prompts(model)
        if records.problem:
            print(f"warning: {records.problem}", flush=True)
        try:
            prompt_log.clear(records, model)
        except OSError as exc:
            print(f"warning: the prompts the engine logged could not be deleted from {prompt_log.root(records)}: "
                  f"{exc.strerror or exc}. Delete that folder by hand.", flush=True)
        print(f"Deleted {gone} kept prompt{'s' if gone != 1 else ''}"
              + (f" of {model.name}." if model else "."), flush=True)
        return 0
    kept = [m for m in records.models() if model is None or m.path == identity.path_key(model)]
    if records.problem:
        print(f"warning: {records.problem}", flush=True)
    if not kept:
        print("No prompts are kept" + (f" for {model.name}." if model else "."), flush=True)
    for m in kept:
        print(f"{len(m.prompts):3d}  {m.path}", flush=True)
    print(f"Kept in {records.prompts_file.path} (the last {usage.KEEP_PROMPTS} per model; the engine logs each "
          f"request's prompt into {prompt_log.root(records)} until Draftwise keeps it); delete them with "
          "`draftwise prompts --clear [MODEL]`.", flush=True)
    return 0
