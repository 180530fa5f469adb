"""Drafting figures and the speed measurement, as the window shows them.

While the engine serves: acceptance, mean accepted length and tokens/s from `/metrics`
(services.drafting_tasks.DraftingMonitor), a warning when the slots report no speculation (the
engine dropped the drafter) or when the acceptance is too low for drafting to pay, with one
click to turn speculation off for this model.

"Measure speed" (quick) or "All settings" (the sweep: every setup the engine and the files
allow): the user's engine is stopped, the measurement runs on the task pool (progress,
cancellable, the window never waits), the result is recorded, the plan is made again (so a
slower automatic drafter is left out, the fastest setup run) and the user's engine is started
again if it was running. After the first successful launch of a
combination without a record the measurement is offered (with how long it takes), or run
at once when the setting says so. Hooks into AppViewModel through its public signals only.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.kinds import EngineKind, MtpMode
from draftwise.core.launch import prepare, session
from draftwise.core.machine import speed
from draftwise.core.measurements import prompt_log, usage
from draftwise.core.measurements.live_figures import Watch
from draftwise.core.measurements.measured import Combination, Measurement
from draftwise.core.measurements.sweep_record import Sweep
from draftwise.core.measuring import learn, quick
from draftwise.core.readable import human_duration
from draftwise.core.speculation import resolver
from draftwise.services.drafting_tasks import DraftingMonitor, MeasureRunner, MetricsAndSlots
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.plan import prefs_for
from draftwise.viewmodels.replan import records_of
from draftwise.viewmodels.roles import AppRole

log = logging.getLogger(__name__)


class DraftingViewModel(QObject):
    changed = Signal()

    def __init__(self, app: AppRole, parent: QObject | None = None) -> None:
        super().__init__(parent or app)
        self.app = app
        self.monitor = DraftingMonitor(app.runner, self)
        self.runner = MeasureRunner(app.runner, self)
        # The answer length from the noise, and the minute (the quick measurement's; the sweep's
        # length stays 128).
        self.settings = quick.MeasureSettings(tokens_from_noise=True, within_s=quick.MINUTE_S)
        self.watch: Watch | None = None
        self.warnings: list[str] = []
        self.can_turn_off = False
        self.offer: str | None = None  # "Measure speed?" with the duration, or None
        self.all_settings = False  # the running measurement is the sweep (every setup)
        self.progress_text = ""
        self.fraction = 0.0
        self.result_text = ""
        self.error_text = ""
        self._offered: set[Combination] = set()  # each offered "Measure speed?" once
        self._restore = False  # start the user's engine again once the measurement is done
        # The offer is to measure again on the user's prompts (their requests called for it: learn.py).
        self.from_use = False
        self._relaunch_after_replan = False
        self._pending_start = False  # waiting for the user's engine to stop
        self._restart_when_stopped = False  # cancelled while waiting for it
        self.monitor.fetched.connect(self._on_fetched)
        self.runner.progress.connect(self._on_progress)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.ended.connect(self._on_ended)
        app.launch.became_ready.connect(self._on_ready)
        # The engine's per-request lines count finished requests exactly (core/measurements/live_figures.py).
        app.launch.log_lines.connect(self._on_lines)
        app.launch.ended.connect(self._on_launch_ended)
        app.outcome_changed.connect(self._on_outcome)

    # ---------------------------------------------------------------- what the card shows
    @property
    def measuring(self) -> bool:
        return self.runner.running or self._pending_start

    def figures_text(self) -> str:
        if self.watch is None:
            return ""
        if not self.watch.speculating:
            f = self.watch.figures
            return tr("{0:.1f} tokens/s").format(f.tokens_per_second) if f.tokens_per_second else ""
        text = tr_message(self.watch.figures.text())
        by_type = self.watch.types_text()  # a combined launch: which type drafted how much
        return text + "\n" + tr_message(by_type) if by_type is not None else text

    def measurement(self) -> Measurement | None:
        out = self.app.outcome
        combo = self._combination(out.decision if out is not None else None)
        store = records_of(out).measured
        return store.get(combo) if combo is not None and store is not None else None

    def can_measure(self) -> bool:
        out = self.app.outcome
        engine = self.app.engine.selected
        if self.measuring or out is None or out.decision is None or self.app.machine is None:
            return False
        if engine is None or engine.kind != EngineKind.LLAMA_CPP:
            return False
        # A model with no drafter is measured with the n-gram types (core/measuring/quick.py).
        no_drafter = out.prepared is not None and quick.ngram_request(out.prepared, out.request) is not None
        return bool(out.decision.argv) or no_drafter

    # ---------------------------------------------------------------- live figures
    def _on_ready(self, _url: str) -> None:
        spec = self.app.launch.spec
        if spec is None or spec.kind != EngineKind.LLAMA_CPP or self.measuring:
            return
        prepared = self._prepared()
        # A relaunch (its fallback): the last start's requests are kept under its own setup.
        unsaved = self.watch.usage.save() if self.watch is not None and self.watch.usage is not None else None
        self.watch = quick.watch_for(prepared) if prepared is not None else Watch(
            speculating=bool(spec.spec.argv), what=quick.what_is_drafting(spec.spec), break_even=None)
        out = self.app.outcome
        if out is not None and out.planned is not None:
            # The user's requests' figures, per model and setup (core/measurements/usage.py), and
            # the prompts the engine logs (with consent): what it logged before this launch
            # first, so the offer below sees it.
            # After the startup fallback the engine runs without speculation: its requests are none's.
            fell_back = self.app.launch.outcome.fallback_reason is not None
            self.watch.usage = usage.Keeper(learn.usage_key(out.planned, fell_back=fell_back),
                                            out.planned.records.usage,
                                            prompts=self._ingest_for(out.planned, spec))
            if self.watch.usage.prompts is not None:
                self.watch.usage.prompts(False)
        self.warnings, self.can_turn_off = [tr_message(unsaved)] if unsaved is not None else [], False
        self.monitor.start(spec.url, spec.api_key, ask_slots=self.watch.speculating)
        self._maybe_offer(prepared)
        if self.offer is None and out is not None and out.planned is not None:
            self._maybe_offer_learning(out.planned)
        self.changed.emit()

    def _ingest_for(self, planned: session.PlannedLaunch, spec) -> prompt_log.Ingest | None:
        """The ingestion of the prompts this launch's engine logs into Draftwise's folder (None
        when it does not: no consent, or the user's own --log-prompts-dir), with the consent
        asked each time (unticked, what comes is deleted unread)."""
        store = planned.records.usage
        if store is None or getattr(spec, "prompt_log", None) is None:
            return None
        return prompt_log.Ingest(store, planned.prepared.model.path, lambda: self.app.settings.keep_prompts)

    def _on_lines(self, lines: list) -> None:
        if self.watch is not None:
            self.watch.lines(lines)
            if self.watch.usage is not None:
                self.watch.usage.lines(lines)

    def _on_launch_ended(self, _state: str) -> None:
        self.monitor.stop()
        if self.watch is not None and self.watch.usage is not None:
            problem = self.watch.usage.save(final=True)
            if problem is not None:
                self.warnings.append(tr_message(problem))
            self.watch.usage = None
        if self._restart_when_stopped:
            self._restart_when_stopped = False
            self._after()
        if self._pending_start:
            self._pending_start = False
            self._start_measurement()
        self.changed.emit()

    def _on_fetched(self, got: MetricsAndSlots) -> None:
        if self.watch is None:
            return
        if self.watch.usage is not None:
            problem = self.watch.usage.save()  # a small write, only when requests finished since
            if problem is not None:
                self.warnings.append(tr_message(problem))
        if got.slots is not None:
            warning = self.watch.slots(got.slots)
            if warning is not None:
                self.warnings.append(tr_message(warning))
        if got.metrics is not None:
            changed, warning = self.watch.metrics(got.metrics)
            if warning is not None:
                self.warnings.append(tr_message(warning))
                self.can_turn_off = True
            if not changed and warning is None and got.slots is None:
                return
        self.changed.emit()

    def turn_speculation_off(self) -> None:
        """The one click: speculation off for this model (a per-model setting; re-plans)."""
        self.app.speculation.set_mtp(MtpMode.OFF)
        self.can_turn_off = False
        self.warnings = [w for w in self.warnings if w]
        self.changed.emit()

    # ---------------------------------------------------------------- measuring
    def _maybe_offer(self, prepared: prepare.Prepared | None) -> None:
        if prepared is None or not prepared.spec.argv or prepared.measurement is not None:
            return
        combo = self._combination(prepared.chosen)
        if combo is None or combo in self._offered:
            return
        self._offered.add(combo)
        if self.app.settings.measure_automatically:
            self.measure_speed()
            return
        engine = self.app.engine.selected
        here = speed.speed_here(prepared.model.path, self.app.machine, engine.binary) if (
            engine is not None and self.app.machine is not None) else None
        eta = human_duration(quick.estimated_seconds(prepared, self.settings, tokens_per_s=here))
        arms = quick.engine_starts(prepared, self.settings)
        self.offer = tr("Measure how much faster speculation makes this model? About {0}; the model is "
                        "loaded {1} times and your engine restarted after.").format(eta, arms)

    def _maybe_offer_learning(self, planned: session.PlannedLaunch) -> None:
        """The user's requests of the last launches call for measuring again on their prompts
        (core/measuring/learn.py): offered with why, as the first measurement is. Accepted,
        it runs at once (the user chose the moment: no idle probe)."""
        try:
            d = learn.due(planned, planned.records.usage) if planned.records.usage is not None else None
        except (OSError, prepare.PrepareError) as exc:
            log.info("learning from use: not checked: %s", exc)
            return
        if d is None:
            return
        self.from_use = True
        self.offer = tr("Your requests suggest measuring again: {0}. Measure on your prompts? Your engine is "
                        "restarted after.").format(tr_message(d.trigger.reason))

    def set_measure_automatically(self, on: bool) -> None:
        self.app.settings.measure_automatically = bool(on)
        self.app.schedule_save()

    def dismiss_offer(self) -> None:
        self.offer, self.from_use = None, False
        self.changed.emit()

    def measure_speed(self, all_settings: bool = False) -> bool:
        """Start a measurement (`all_settings`: the sweep, every setup): stop the user's engine
        first if it runs (restarted after)."""
        if not self.can_measure():
            return False
        self.all_settings = bool(all_settings)
        self.from_use = self.from_use and not self.all_settings
        self.offer, self.error_text, self.result_text = None, "", ""
        self.progress_text, self.fraction = tr("Starting the measurement…"), 0.0
        if self.app.engine_running():
            self._restore = True
            self._pending_start = True
            self.app.do_stop()
        else:
            self._restore = False
            self._start_measurement()
        self.changed.emit()
        return True

    def _start_measurement(self) -> None:
        app, out = self.app, self.app.outcome
        engine = app.engine.selected
        if out is None or engine is None or app.model is None or app.machine is None:
            self.error_text = tr("Nothing to measure: choose a model first.")
            self.changed.emit()
            return
        # The launch session plans it again, as Launch would (services/drafting_tasks.py).
        self.runner.start(self._request(), session.Engine(engine.binary, app.engine.caps(), engine.backend),
                          app.machine, self.settings, all_settings=self.all_settings, from_use=self.from_use)
        self.from_use = False

    def cancel(self) -> None:
        if self._pending_start:
            # Not started yet: the user's engine is still stopping; start it again once it has.
            self._pending_start = False
            self._restart_when_stopped = True
        self.runner.cancel()
        self.progress_text = tr("Stopping the measurement…")
        self.changed.emit()

    def forget(self) -> int:
        """Drop this model's measurements (all drafters, engines, machines) and re-plan."""
        if self.app.model is None:
            return 0
        n = records_of(self.app.outcome).measured.forget(model=self.app.model.path)
        self.result_text = tr("The speed measurements of this model were forgotten.") if n else ""
        self.app.schedule_replan()
        self.changed.emit()
        return n

    def _on_progress(self, p: quick.Progress) -> None:
        self.progress_text = tr_message(p.text)
        self.fraction = p.step / p.steps if p.steps else 0.0
        self.changed.emit()

    def _on_finished(self, result: Measurement | Sweep) -> None:
        m = result.measurement() if isinstance(result, Sweep) else result
        self.result_text = tr_message(result.summary())
        if m is not None and m.slower:
            self.result_text += " " + tr("Slower than without speculation: an automatic drafter is left out from now on.")
        self.app.schedule_replan()  # the record changes the plan: the setup, or the drafter left out

    def _on_failed(self, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or exc
        self.error_text = tr("The measurement failed: {0}").format(tr_message(message))

    def _on_ended(self) -> None:
        self.progress_text, self.fraction = "", 0.0
        self._after()
        self.changed.emit()

    def _after(self) -> None:
        if self._restore:
            self._restore = False
            self._relaunch_after_replan = True
            if not self.app.replanning:
                self._on_outcome()

    def _on_outcome(self) -> None:
        if self._relaunch_after_replan and not self.app.replanning:
            self._relaunch_after_replan = False
            if not self.app.engine_running():
                self.app.do_launch()

    def shutdown(self, wait_ms: int = 20000) -> None:
        """App closing: stop the measurement and its engine before the process ends."""
        self.monitor.stop()
        self._restore = self._relaunch_after_replan = self._pending_start = self._restart_when_stopped = False
        if self.runner.running:
            self.runner.cancel()
            self.runner.wait(wait_ms)

    # ---------------------------------------------------------------- helpers
    def _request(self) -> prepare.Request:
        out = self.app.outcome
        if out is not None and out.planned is not None:
            return out.request  # before the remembered rung, which the session applies again
        app = self.app
        return prepare.Request(
            model=app.model.path, mtp=app.speculation.mtp,
            draft=Path(app.speculation.draft.strip()).expanduser() if app.speculation.draft.strip() else None,
            extra_args=tuple(app.extra_args), prefs=prefs_for(app.plan.context, app.plan.kv_type),
        )

    def _prepared(self) -> prepare.Prepared | None:
        """What the running launch was made from (the replan's answer: measurement applied)."""
        out = self.app.outcome
        return out.prepared if out is not None else None

    def _combination(self, decision: resolver.SpecDecision | None) -> Combination | None:
        app = self.app
        engine = app.engine.selected
        if decision is None or not decision.argv or app.model is None or app.machine is None or engine is None:
            return None
        return prepare.combination(app.model.path, decision, engine.binary, app.machine)
