"""The parts one object plays for another in the window, as typed Protocols.

`AppViewModel` owns the other view-models and hands itself to helpers that each use a part
of it (`launch_gate.block_reason`, `switch.ModelSwitch`, `drafting.DraftingViewModel`,
`get_models.for_app`): `AppRole` is that part, so a helper says what it reads instead of
taking `Any`. The launch starts an `EngineProcessRole` (services/engine_process.py's
`EngineProcess`, or a test's stand-in), the chat a `ChatStreamRole` and the picture tray a
`PropsProbeRole` (services/chat_client.py). The machine and the engine are concrete
dataclasses (`hardware.Machine`, `engine.EngineChoice`) and are named as such where used.

Only annotations: nothing here runs, and the view-models are imported for the type checker
alone, so no import cycle comes of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from draftwise.core.gguf.reader import ModelInfo
    from draftwise.core.machine.hardware import Machine
    from draftwise.core.messages import Text
    from draftwise.core.settings import Settings
    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.engine import EngineViewModel
    from draftwise.viewmodels.launch import LaunchViewModel
    from draftwise.viewmodels.library import LibraryViewModel
    from draftwise.viewmodels.model_details import ModelDetailsViewModel
    from draftwise.viewmodels.plan import PlanViewModel
    from draftwise.viewmodels.replan import Outcome
    from draftwise.viewmodels.speculation import SpeculationViewModel
    from draftwise.viewmodels.workers import WorkersViewModel


class EngineProcessRole(Protocol):
    """What `LaunchViewModel` needs of the process it starts: the engine's whole state in
    `changed` (a core EngineOutcome, written by the launch flow alone) and its output lines
    in `log_batch`."""

    changed: SignalInstance  # EngineOutcome
    log_batch: SignalInstance  # list[str]

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def relaunch_refused(self) -> None: ...

    def deleteLater(self) -> None: ...


class ChatStreamRole(Protocol):
    """One streamed chat request (services/chat_client.py `ChatStream`)."""

    events: SignalInstance  # list[chat.Event]
    failed: SignalInstance  # chat.ChatError
    finished: SignalInstance

    @property
    def cancelled(self) -> bool: ...

    # The request body is the engine's JSON, hence Any.
    def start(self, base_url: str, api_key: str, body: dict[str, Any], path: str = ...) -> None: ...

    def cancel(self) -> None: ...

    def deleteLater(self) -> None: ...


class PropsProbeRole(Protocol):
    """Asks a ready engine for its `/props` (services/chat_client.py `PropsProbe`)."""

    answered: SignalInstance  # the decoded JSON object, or None

    def ask(self, base_url: str, api_key: str) -> None: ...


class AppRole(Protocol):
    """The window's state as its helpers read it (`AppViewModel`)."""

    settings: Settings
    runner: TaskRunner
    machine: Machine | None
    model: ModelInfo | None
    model_path: Path | None
    extra_args: tuple[str, ...]
    extra_args_error: str | None
    launch: LaunchViewModel
    engine: EngineViewModel
    speculation: SpeculationViewModel
    plan: PlanViewModel
    details: ModelDetailsViewModel
    library: LibraryViewModel
    workers: WorkersViewModel
    outcome_changed: SignalInstance
    launch_state_changed: SignalInstance

    @property
    def outcome(self) -> Outcome | None: ...

    @property
    def replanning(self) -> bool: ...

    def engine_running(self) -> bool: ...

    def running_model_path(self) -> Path | None: ...

    def can_stop(self) -> bool: ...

    def can_launch(self) -> bool: ...

    def do_launch(self, *, notes: Sequence[Text] = ()) -> bool: ...

    def do_stop(self) -> None: ...

    def schedule_replan(self) -> None: ...

    def schedule_save(self) -> None: ...

    def add_folder(self, folder: str | Path) -> bool: ...

    def open_model(self, path: str | Path) -> None: ...
