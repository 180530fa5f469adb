"""The right column of the window: the chosen model's header and its cards (Speculation,
Memory, Advanced with Other computers inside it, Model details) in a scroll area, and the Launch card pinned under it so
Launch and Stop stay reachable in a small window.

Each card is its own widget bound to its own view-model (see the card modules); this page
only lays them out and passes the app's view-models in.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget

from draftwise.ui.advanced_card import AdvancedSection
from draftwise.ui.launch_card import LaunchCard
from draftwise.ui.memory_card import MemoryCard
from draftwise.ui.model_details import DetailsSection, ModelHeader
from draftwise.ui.speculation_card import SpeculationCard
from draftwise.ui.wheel_guard import WheelGuard
from draftwise.ui.workers_card import WorkersCard
from draftwise.viewmodels.app import AppViewModel


class ModelPage(QWidget):
    def __init__(self, app: AppViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rightSide")
        self.header = ModelHeader(app.details)
        self.speculation = SpeculationCard(app.speculation, app.details, app.launch)
        self.speculation.retry_drafters.connect(app.retry_broken_drafters)
        self.speculation.forget_measurement.connect(app.drafting.forget)
        self.memory = MemoryCard(app.plan, app.details)
        self.advanced = AdvancedSection(app)
        # Other computers / share this computer (docs/rpc.md): inside Advanced, folded until used.
        self.workers = WorkersCard(app.workers)
        self.advanced.card.body.addWidget(self.workers)
        self.details = DetailsSection(app.details)
        self.launch_card = LaunchCard(app)
        self.cards = (self.header, self.speculation, self.memory, self.advanced, self.workers, self.details,
                      self.launch_card)  # fmt: skip

        body = QWidget()
        body.setObjectName("detailsBody")
        lay = QVBoxLayout(body)
        lay.setContentsMargins(8, 10, 12, 10)
        lay.setSpacing(AdvancedSection.SPACING)
        for card in self.cards[:-1]:
            if card is not self.workers:
                lay.addWidget(card)
        lay.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setObjectName("detailsScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(body)
        # The wheel scrolls the cards; it does not change the setting under the pointer.
        self.wheel_guard = WheelGuard(self.scroll)
        rl = QVBoxLayout(self)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.setSpacing(0)
        rl.addWidget(self.scroll, 1)
        pin = QVBoxLayout()
        pin.setContentsMargins(8, 6, 12 + self.scroll.verticalScrollBar().sizeHint().width(), 8)
        pin.addWidget(self.launch_card)
        rl.addLayout(pin)

    def retranslate(self) -> None:
        for card in self.cards:
            card.retranslate()

    def refresh(self) -> None:
        for card in self.cards:
            card.refresh()
