"""`draftwise launch`'s part in learning from use (core/measuring/runs/learn.py).

Before the engine starts: when the user's requests of the last launches call for it and the
computer is idle, measure the kept setup again on their prompts, print why and what it found,
and have the launch planned again with it. While the engine serves: keep each finished
request's figures under the model and the setup running (core/measuring/records/usage.py).
"""

from __future__ import annotations

import signal
import threading


def learn_before_launch(planned) -> bool:
    """True when a measurement on the user's prompts was recorded (plan the launch again)."""
    from draftwise.core.machine import idle
    from draftwise.core.measuring.records import usage
    from draftwise.core.measuring.runs import arms, learn

    cancel = threading.Event()

    def on_signal(signum, _frame) -> None:
        cancel.set()

    def show(p: arms.Progress) -> None:
        print(f"  [{p.step}/{p.steps}] {p.text}", flush=True)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        outcome = learn.before_launch(planned, usage.UsageRecords(), idle=idle.idle, cancel=cancel,
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


def keeper_for(planned):
    """The keeper of this launch's requests' figures, under its model, engine, machine and setup."""
    from draftwise.core.measuring.records import usage
    from draftwise.core.measuring.runs import learn

    return usage.Keeper(learn.usage_key(planned))
