"""What the user set for a model: its overrides (context, KV type, speculation, draft, extra
arguments; stored per model in the settings) and profiles (named sets of them, saved from one
model and applied to another).

The speculation and plan view-models hold the values shown; the extra arguments belong to
the app, which hands in how to read and set them, plus "re-plan" and "save soon".
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.kinds import MtpMode
from draftwise.core.settings import ModelOverrides, Settings
from draftwise.viewmodels.plan import PlanViewModel
from draftwise.viewmodels.speculation import SpeculationViewModel


class ProfilesViewModel(QObject):
    changed = Signal()  # a profile was saved or deleted

    def __init__(
        self,
        settings: Settings,
        speculation: SpeculationViewModel,
        plan: PlanViewModel,
        *,
        model_path: Callable[[], Path | None],
        extra_args: Callable[[], tuple[tuple[str, ...], str | None]],
        set_extra_args_text: Callable[[str], None],
        replan: Callable[[], None],
        save: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.speculation = speculation
        self.plan = plan
        self._model_path = model_path
        self._extra_args = extra_args  # (tokens, error in words) as typed now
        self._set_extra_args_text = set_extra_args_text  # without re-planning
        self._replan = replan
        self._save = save

    # ---------------------------------------------------------------- this model
    def current(self) -> ModelOverrides:
        """The settings shown now, as overrides."""
        args, _error = self._extra_args()
        return ModelOverrides(
            context=self.plan.context, kv_type=self.plan.kv_type,
            mtp=self.speculation.mtp if self.speculation.mtp != MtpMode.AUTO else None,
            draft=self.speculation.draft.strip() or None, extra_args=list(args),
        )

    def store(self) -> None:
        """Remember the settings shown for the chosen model (extra arguments that cannot be
        read keep the last good ones)."""
        path = self._model_path()
        if path is None:
            return
        ov = self.current()
        if self._extra_args()[1]:
            ov.extra_args = self.settings.overrides_for(path).extra_args
        self.settings.set_overrides(path, ov)
        self._save()

    def load(self, o: ModelOverrides, max_context: int) -> None:
        """Show these settings (nothing is stored or re-planned)."""
        self.speculation.load(o.mtp or MtpMode.AUTO, o.draft or "")
        self.plan.load(o.context, o.kv_type, max_context)
        self._set_extra_args_text(" ".join(shlex.quote(a) for a in o.extra_args))

    def reset(self) -> None:
        """Back to "decide for me" for this model."""
        if self._model_path() is None:
            return
        self._use(ModelOverrides())

    def _use(self, o: ModelOverrides) -> None:
        self.load(o, self.plan.max_context)
        self.store()
        self._replan()

    # ---------------------------------------------------------------- profiles
    def names(self) -> list[str]:
        return [p.name for p in self.settings.profiles]

    def save(self, name: str) -> None:
        name = name.strip()
        if name:
            self.settings.save_profile(name, self.current())
            self._save()
            self.changed.emit()

    def apply(self, name: str) -> bool:
        """Use profile `name` on the chosen model; False without such a profile or a model."""
        p = self.settings.profile(name)
        if p is None or self._model_path() is None:
            return False
        self._use(p.overrides)
        return True

    def delete(self, name: str) -> None:
        self.settings.delete_profile(name)
        self._save()
        self.changed.emit()
