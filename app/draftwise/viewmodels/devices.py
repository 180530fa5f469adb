"""Which GPU the window plans and launches on, and how much of it the user lets it use.

Holds the machine as probed and the user's choice (settings.device, settings.device_limits);
`machine` is the machine the plan and the launch see: core's `device_choice.select` applied, so the
window and `draftwise launch --device` decide the same way (automatic choice never takes a
software device such as lavapipe; an explicit one does).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from draftwise.core.machine import device_choice, hardware
from draftwise.core.settings import Settings
from draftwise.viewmodels.i18n import tr


@dataclass(frozen=True)
class DeviceChoice:
    name: str | None  # the engine's name ("Vulkan0"); None: automatic
    label: str


class DevicesViewModel(QObject):
    changed = Signal()  # the user changed the choice or the limit
    probed_changed = Signal()  # a new machine was probed (the choices may differ)

    def __init__(self, settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.probed: hardware.Machine | None = None

    # ------------------------------------------------------------ state
    def set_probed(self, machine: hardware.Machine | None) -> None:
        self.probed = machine
        self.probed_changed.emit()

    @property
    def machine(self) -> hardware.Machine | None:
        """The machine one launch sees: the chosen devices and the user's limits."""
        if self.probed is None:
            return None
        limits = device_choice.limits_from(self.settings.device_limits)
        chosen = [self.settings.device] if self.settings.device else None
        try:
            return device_choice.select(self.probed, chosen, limits)
        except device_choice.DeviceChoiceError:
            return device_choice.select(self.probed, None, limits)  # a stored choice this engine lacks

    def choices(self) -> list[DeviceChoice]:
        out = [DeviceChoice(None, tr("Automatic"))]
        for g in (self.probed.gpus if self.probed is not None else []):
            label = g.label + (f" — {tr('software, slow')}" if g.software else "")
            out.append(DeviceChoice(g.engine_name, label))
        return out

    @property
    def selected(self) -> str | None:
        return self.settings.device

    def select(self, name: str | None) -> None:
        if name == self.settings.device:
            return
        self.settings.device = name
        self.changed.emit()

    # ------------------------------------------------------------ the limit ("keep N GB free")
    def _gpu(self) -> hardware.Gpu | None:
        m = self.machine
        return m.gpus[0] if m is not None and m.gpus else None

    def keep_free_gb(self) -> float | None:
        """The limit on the device in use, as "keep N GB free"; None: the default (1 GB)."""
        g = self._gpu()
        stored = self.settings.device_limits.get(g.key) if g is not None else None
        return stored.get("keep_free_gb") if stored else None

    def set_keep_free_gb(self, gb: float | None) -> None:
        g = self._gpu()
        if g is None:
            return
        if gb is None:
            self.settings.device_limits.pop(g.key, None)
        else:
            self.settings.device_limits[g.key] = {"keep_free_gb": float(gb)}
        self.changed.emit()
