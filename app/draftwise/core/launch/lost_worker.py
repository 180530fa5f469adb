"""The one relaunch rule after an engine lost a worker, for the CLI and the window alike.

core/launch/launch_flow.py asks the workers the engine used when it ends with a worker fault
(crash.WORKER_GONE, WORKER_UNREACHABLE) and keeps those that no longer answer in the engine's
outcome (`workers_lost`); this module says what follows from that outcome. `launch`
(cli/launch.py) and the window (viewmodels/worker_loss.py) then plan again on the workers
that are left and launch, or say what to do.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.core.launch.outcome import FAILED, EngineOutcome
from draftwise.core.messages import Message, msg


@dataclass(frozen=True)
class WorkerRelaunch:
    """The one rule after an engine lost a worker (mid-reply, or while the weights were sent):
    launch again at once on the workers that are left (`rest`; none: this computer alone),
    planned again without `lost`, when the model fits there; otherwise launch nothing and
    say what to do. Each round drops at least one worker, so it ends. The CLI's `launch` and
    the window (viewmodels/worker_loss.py) both follow it."""

    lost: tuple[str, ...]
    rest: tuple[str, ...]

    @property
    def gone(self) -> str:
        return ", ".join(self.lost)

    def note(self) -> Message:
        """Said with the launch that runs without them."""
        return msg("{workers} went away during the last run; Draftwise launched again without it.",
                   workers=self.gone)

    def refused_step(self) -> Message:
        """The failure's next step when the model does not fit without them."""
        return msg("The model does not fit on what is left without {workers}: start ggml-rpc-server there "
                   "again, then Launch.", workers=self.gone)


def worker_relaunch(outcome: EngineOutcome) -> WorkerRelaunch | None:
    """What the rule says for an engine's outcome: a relaunch without the workers that went
    away, or None (it did not fail, or every worker still answers). A user's Stop ends
    STOPPED, never here."""
    if outcome.stage != FAILED or not outcome.workers_lost:
        return None
    rest = tuple(ep for ep in outcome.workers_used if ep not in outcome.workers_lost)
    return WorkerRelaunch(outcome.workers_lost, rest)
