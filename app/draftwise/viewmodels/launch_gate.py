"""Whether Launch may start now, and why not: one ordered list of conditions (a running
engine, the model still being read, its problems, the engine, extra arguments, the plan)."""

from __future__ import annotations

from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.plan import NO_FIT
from draftwise.viewmodels.roles import AppRole


def block_reason(app: AppRole) -> str | None:
    """Why Launch is not possible now, in the window's words; None when it is."""
    if app.launch.running:
        running = app.running_model_path()
        if running is not None and app.model_path is not None and running != app.model_path:
            return tr("Stop {0} to launch this model.").format(app.launch.model_name or running.stem)
        return tr("The engine is running.")
    if app.model_path is None:
        return tr("Choose a model first.")
    if app.details.loading:
        return tr("Reading the model…")
    problems = app.details.problems()
    if problems:
        return problems[0]
    if app.model is None:
        return tr("Choose a model first.")
    blocked = app.engine.blocks_launch()
    if blocked:
        return blocked
    if app.extra_args_error:
        return app.extra_args_error
    if app.replanning:
        return tr("Planning…")
    spec_block = app.speculation.blocks_launch()
    if spec_block:
        return spec_block
    out = app.outcome
    if out is None:
        return tr("Planning…")
    if out.plan is not None and out.plan.fit == NO_FIT:
        return tr_message(out.plan.reasons[-1]) if out.plan.reasons else tr("The model does not fit in this machine's memory.")
    return None
