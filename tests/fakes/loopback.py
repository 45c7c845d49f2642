"""A loopback HTTP server for provider tests: it records requests and plays scripted replies.

Each test gives the server a list of `Reply`s (one per request, in order) or a function of the
`RecordedRequest`. A reply is JSON, a server-sent-event stream (optionally paced, held until the
client leaves, or cut by a TCP reset), or an error status with a body. The server binds
127.0.0.1 on a free port and runs in a thread; the SDK under test talks to `LoopbackServer.url`.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "RecordedRequest", "Reply", "ScriptedServer", "Served", "sse"]


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event: ``data`` as JSON (a str is sent verbatim), with its event name."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"


@dataclass
class RecordedRequest:
    """A request the server received: method, path (with query), headers and body."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON (``None`` for an empty body)."""
        return json.loads(self.raw_body) if self.raw_body else None


@dataclass
class Reply:
    """What the server answers one request with.

    - ``json``: a JSON body (with ``status``);
    - ``events``: SSE strings (see `sse`), sent ``pace`` seconds apart;
    - ``reset_after``: after that many events, reset the TCP connection (no clean end);
    - ``hold_after``: after that many events, keep the stream open (sending nothing) until the
      client disconnects or ``release`` is set;
    - ``headers``: extra response headers.
    """

    status: int = 200
    json: Any = None
    events: Sequence[str] | None = None
    pace: float = 0.0
    reset_after: int | None = None
    hold_after: int | None = None
    release: threading.Event = field(default_factory=threading.Event)
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[RecordedRequest], Reply]


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1; use as a context manager."""

    def __init__(self, replies: Sequence[Reply] | Handler) -> None:
        self.requests: list[RecordedRequest] = []
        self.client_disconnected = threading.Event()
        """Set when a client went away while a stream was being written."""
        self._replies = list(replies) if not callable(replies) else None
        self._handler = replies if callable(replies) else None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._make_handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
        if self._handler is not None:
            return self._handler(request)
        assert self._replies is not None
        if index >= len(self._replies):
            return Reply(status=500, json={"error": {"message": f"no reply scripted for {index}"}})
        return self._replies[index]

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: tests read `requests`, not logs."""

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorded = RecordedRequest(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                reply = server._next_reply(recorded)
                if reply.events is None:
                    self._send_json(reply)
                else:
                    self._send_events(reply)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

            def _send_json(self, reply: Reply) -> None:
                data = json.dumps(reply.json if reply.json is not None else {}).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_events(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.close_connection = True
                try:
                    for index, event in enumerate(reply.events or ()):
                        if reply.reset_after is not None and index == reply.reset_after:
                            self._reset()
                            return
                        if reply.hold_after is not None and index == reply.hold_after:
                            self._hold(reply)
                            return
                        self.wfile.write(event.encode())
                        self.wfile.flush()
                        if reply.pace:
                            time.sleep(reply.pace)
                    if reply.reset_after is not None:
                        self._reset()
                    elif reply.hold_after is not None:
                        self._hold(reply)
                except (BrokenPipeError, ConnectionResetError):
                    server.client_disconnected.set()

            def _hold(self, reply: Reply) -> None:
                # Poll the socket: a client that leaves makes it readable with nothing to read.
                sock = self.connection
                while not reply.release.is_set():
                    sock.settimeout(0.02)
                    try:
                        if sock.recv(1, socket.MSG_PEEK) == b"":
                            server.client_disconnected.set()
                            return
                    except TimeoutError:
                        continue
                    except OSError:
                        server.client_disconnected.set()
                        return

            def _reset(self) -> None:
                # SO_LINGER with a zero timeout makes close() send RST: a connection reset.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()

        return _Handler


@dataclass
class Served:
    """One test's view of a shared server: its URL and the requests it recorded for this test."""

    server: LoopbackServer
    first: int

    @property
    def url(self) -> str:
        """The server's URL."""
        return self.server.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received since this test scripted the server."""
        return self.server.requests[self.first :]

    @property
    def client_disconnected(self) -> threading.Event:
        """Set when a client left while a stream was being written."""
        return self.server.client_disconnected


class ScriptedServer:
    """One `LoopbackServer` for a whole test module, scripted anew by each test.

    A server takes a moment to shut down, so provider test modules share one; `serve()` gives a
    test its replies and a `Served` view of the requests that follow. A request with no reply
    left gets HTTP 500 ``{"unscripted": true}``.
    """

    def __init__(self) -> None:
        self._script: deque[Reply] = deque()
        self.server = LoopbackServer(self._answer)

    def _answer(self, request: RecordedRequest) -> Reply:
        return self._script.popleft() if self._script else Reply(500, {"unscripted": True})

    def __enter__(self) -> ScriptedServer:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    def serve(self, *replies: Reply) -> Served:
        """Answer the next requests with ``replies``, in order."""
        self._script.clear()
        self._script.extend(replies)
        self.server.client_disconnected.clear()
        return Served(self.server, len(self.server.requests))
