"""One streamed chat request to the engine, without blocking the window.

QNetworkAccessManager does the socket work on Qt's own network thread; each piece that
arrives goes through `core.chat.SseDecoder` and leaves as one `events` signal (a list), so
the GUI thread does a small, bounded amount of work per network read. What the events mean
is decided in core; what to show is the view-model's business.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QByteArray, QObject, QUrl, Signal
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkReply, QNetworkRequest

from draftwise.core.chat import protocol as chat

# Errors that mean "nobody listens there" rather than "the line broke mid-reply".
_REFUSED = {
    QNetworkReply.NetworkError.ConnectionRefusedError,
    QNetworkReply.NetworkError.HostNotFoundError,
}


class ChatStream(QObject):
    """POST /v1/chat/completions (or, continuing text, /v1/completions) with `stream: true`;
    cancel() ends it, keeping what came."""

    events = Signal(list)  # list[chat.Event], in arrival order
    failed = Signal(object)  # chat.ChatError: the request did not end well
    finished = Signal()  # always last, after events/failed

    def __init__(self, net: QNetworkAccessManager | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._net = net or QNetworkAccessManager(self)
        self._reply: QNetworkReply | None = None
        self._decoder = chat.SseDecoder()
        self._cancelled = False
        self._saw_end = False
        self._status: int | None = None
        self._error_body = b""
        self._path = chat.CHAT_PATH

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def active(self) -> bool:
        return self._reply is not None

    def start(self, base_url: str, api_key: str, body: dict[str, Any], path: str = chat.CHAT_PATH) -> None:
        if self._reply is not None:
            raise RuntimeError("a request is already running")
        self._decoder = chat.SseDecoder()
        self._cancelled = False
        self._saw_end = False
        self._status = None
        self._error_body = b""
        self._path = path
        request = QNetworkRequest(QUrl(base_url.rstrip("/") + path))
        request.setHeader(QNetworkRequest.KnownHeaders.ContentTypeHeader, "application/json")
        request.setRawHeader(QByteArray(b"Accept"), QByteArray(b"text/event-stream"))
        if api_key:
            request.setRawHeader(QByteArray(b"Authorization"), QByteArray(f"Bearer {api_key}".encode()))
        # A long prompt on a slow CPU can take minutes before the first byte: no transfer
        # timeout. A dead engine closes the socket, which ends the reply at once.
        request.setTransferTimeout(0)
        payload = QByteArray(json.dumps(body, ensure_ascii=False).encode("utf-8"))
        reply = self._net.post(request, payload)
        self._reply = reply
        reply.readyRead.connect(self._read)
        reply.finished.connect(self._finished)

    def cancel(self) -> None:
        """Abort the request: the engine sees the connection close and stops generating."""
        if self._reply is not None:
            self._cancelled = True
            self._reply.abort()

    # ------------------------------------------------------------ reply events
    def _http_status(self, reply: QNetworkReply) -> int | None:
        code = reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute)
        return int(code) if code is not None else None

    def _read(self) -> None:
        reply = self._reply
        if reply is None:
            return
        if self._status is None:
            self._status = self._http_status(reply)
        data = bytes(reply.readAll().data())
        if self._status is not None and self._status >= 400:
            self._error_body += data  # a JSON error body, read whole at the end
            return
        self._emit(self._decoder.feed(data))

    def _emit(self, events: list[chat.Event]) -> None:
        if not events:
            return
        if any(isinstance(e, (chat.Done, chat.Failure)) for e in events):
            self._saw_end = True
        self.events.emit(events)

    def _finished(self) -> None:
        reply = self._reply
        if reply is None:
            return
        self._read()
        self._reply = None
        error = reply.error()
        detail = reply.errorString()
        status = self._status if self._status is not None else self._http_status(reply)
        reply.deleteLater()
        if self._cancelled:
            self.finished.emit()
            return
        if status is not None and status >= 400:
            self.failed.emit(chat.error_of_response(status, self._error_body, self._path))
        else:
            self._emit(self._decoder.close())
            if error in _REFUSED:
                self.failed.emit(chat.refused_error(detail))
            elif error != QNetworkReply.NetworkError.NoError:
                self.failed.emit(chat.connection_error(detail))
            elif not self._saw_end:
                # The socket closed cleanly but the engine never said [DONE]: it went away.
                self.failed.emit(chat.connection_error(detail or "closed"))
        self.finished.emit()


class PropsProbe(QObject):
    """GET /props once the engine is ready: what it can take (`modalities.vision`)."""

    answered = Signal(object)  # the decoded JSON object, or None when it did not answer

    def __init__(self, net: QNetworkAccessManager | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._net = net or QNetworkAccessManager(self)

    def ask(self, base_url: str, api_key: str) -> None:
        request = QNetworkRequest(QUrl(base_url.rstrip("/") + "/props"))
        if api_key:
            request.setRawHeader(QByteArray(b"Authorization"), QByteArray(f"Bearer {api_key}".encode()))
        request.setTransferTimeout(10_000)
        reply = self._net.get(request)

        def done() -> None:
            data = bytes(reply.readAll().data())
            ok = reply.error() == QNetworkReply.NetworkError.NoError
            reply.deleteLater()
            try:
                self.answered.emit(json.loads(data.decode("utf-8", "replace")) if ok else None)
            except json.JSONDecodeError:
                self.answered.emit(None)

        reply.finished.connect(done)
