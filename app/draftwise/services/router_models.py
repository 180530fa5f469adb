"""The router's list of models (`GET /models`), asked on a timer through Qt's network client:
each served model's state without blocking the window, and, when a model's section was
written again (its fallback, its ladder rung), the router's reload and that model's load. Like the engine's health checks
(engine_process.py): QNetworkAccessManager, never through a proxy, the key sent as Bearer,
one request on its way at a time.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QByteArray, QObject, QTimer, QUrl, Signal
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkProxy, QNetworkReply, QNetworkRequest

EVERY_MS = 1000  # as `draftwise serve` reads it (cli/serve.py WATCH_EVERY_S)
TIMEOUT_MS = 2000
RELOAD_TIMEOUT_MS = 10_000  # reading the preset again and loading a model: as cli/serve.py waits


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
        self._reply = self._manager().get(self._request("/models"))
        self._reply.finished.connect(self._answered)

    def reload(self, load: str | None) -> None:
        """Have the router read its preset file again (`/models?reload=1`), then load `load`
        (a model's section was written again: core/serving/serve_flow.py `Rewrite`)."""
        if not self._url:
            return
        net = self._manager()
        reply = net.get(self._request("/models?reload=1"))

        def reloaded() -> None:
            reply.deleteLater()
            if load is not None and self._url:
                request = self._request("/models/load")
                request.setHeader(QNetworkRequest.KnownHeaders.ContentTypeHeader, "application/json")
                posted = net.post(request, QByteArray(json.dumps({"model": load}).encode()))
                posted.finished.connect(posted.deleteLater)

        reply.finished.connect(reloaded)

    def _manager(self) -> QNetworkAccessManager:
        if self._net is None:
            self._net = QNetworkAccessManager(self)
            self._net.setProxy(QNetworkProxy(QNetworkProxy.ProxyType.NoProxy))
        return self._net

    def _request(self, path: str) -> QNetworkRequest:
        request = QNetworkRequest(QUrl(self._url + path))
        request.setRawHeader(QByteArray(b"Authorization"), QByteArray(f"Bearer {self._key}".encode()))
        request.setTransferTimeout(RELOAD_TIMEOUT_MS if path != "/models" else TIMEOUT_MS)
        return request

    def _answered(self) -> None:
        reply, self._reply = self._reply, None
        if reply is None:
            return
        code = reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute)
        body = bytes(reply.readAll().data())
        reply.deleteLater()
        if self._url and code is not None and int(code) == 200:
            self.answered.emit(body)
