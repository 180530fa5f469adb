"""The router's list of models (`GET /models`), asked on a timer through Qt's network client:
each served model's state without blocking the window. Like the engine's health checks
(engine_process.py): QNetworkAccessManager, never through a proxy, the key sent as Bearer,
one request on its way at a time.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QObject, QTimer, QUrl, Signal
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkProxy, QNetworkReply, QNetworkRequest

EVERY_MS = 1000  # as `draftwise serve` reads it (cli/serve.py WATCH_EVERY_S)
TIMEOUT_MS = 2000


class RouterModels(QObject):
    """Asks `url`/models every EVERY_MS while started; `answered` carries each 200 body."""

    answered = Signal(bytes)

    def __init__(self, parent: QObject | None = None, every_ms: int = EVERY_MS) -> None:
        super().__init__(parent)
        self._url = ""
        self._key = ""
        self._net: QNetworkAccessManager | None = None
        self._reply: QNetworkReply | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(every_ms)
        self._timer.timeout.connect(self.ask)

    def start(self, url: str, api_key: str) -> None:
        self._url, self._key = url, api_key
        self._timer.start()
        self.ask()

    def stop(self) -> None:
        self._timer.stop()
        self._url = ""

    def ask(self) -> None:
        """One request now (none when one is on its way or the watch is stopped)."""
        if not self._url or self._reply is not None:
            return
        if self._net is None:
            self._net = QNetworkAccessManager(self)
            self._net.setProxy(QNetworkProxy(QNetworkProxy.ProxyType.NoProxy))
        request = QNetworkRequest(QUrl(self._url + "/models"))
        request.setRawHeader(QByteArray(b"Authorization"), QByteArray(f"Bearer {self._key}".encode()))
        request.setTransferTimeout(TIMEOUT_MS)
        self._reply = self._net.get(request)
        self._reply.finished.connect(self._answered)

    def _answered(self) -> None:
        reply, self._reply = self._reply, None
        if reply is None:
            return
        code = reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute)
        body = bytes(reply.readAll().data())
        reply.deleteLater()
        if self._url and code is not None and int(code) == 200:
            self.answered.emit(body)
