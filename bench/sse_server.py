"""A loopback Chat Completions server for benchmarks, run in a process of its own.

``python bench/sse_server.py [--tokens N]`` binds 127.0.0.1 on a free port, prints
``http://127.0.0.1:<port>`` on its first stdout line, and answers every
``POST /v1/chat/completions`` with one streamed completion in OpenAI's SSE wire format (the
shapes of ``tests/fakes/openai_server.py``): a role chunk, ``N`` content chunks of one token
each, a finish chunk (``stop``), a usage-only chunk (``choices: []``, ``completion_tokens=N``)
and ``[DONE]``, one ``send`` per event, with no pacing, then it closes the connection
(``Connection: close``; the body ends with it, as the test fakes do).

A request that is not a streamed chat completion asking for the usage chunk and ``N`` output
tokens (``max_tokens`` or ``max_completion_tokens``) gets a 400 with an OpenAI error body, so a
benchmark's two sides cannot silently send different requests.

Why a process and not a thread: a server thread in the benchmark's process would take the GIL
from the client it serves at moments that differ between the two sides; in its own process it
runs on the other core and the client's timings are the client's. `SSEServerProcess` starts it
and stops it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Self

__all__ = [
    "SSEServerProcess",
    "completion_events",
    "main",
    "refusal_body",
    "request_problem",
    "stop_at_eof",
    "token",
]

MODEL = "gpt-4o-mini-2024-07-18"
PROMPT_TOKENS = 12


def _chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_726_000_000,
        "model": MODEL,
        "system_fingerprint": "fp_44709d6fcb",
        "choices": choices,
        "usage": usage,
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _choice(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]


def token(index: int) -> str:
    """The text of content chunk ``index``: one token each."""
    return f" tok{index}"


def completion_events(tokens: int) -> list[bytes]:
    """The SSE events of one completion of ``tokens`` one-token content chunks."""
    usage = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": tokens,
        "total_tokens": PROMPT_TOKENS + tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    return [
        _chunk(_choice({"role": "assistant", "content": "", "refusal": None})),
        *(_chunk(_choice({"content": token(i)})) for i in range(tokens)),
        _chunk(_choice({}, "stop")),
        _chunk([], usage),
        b"data: [DONE]\n\n",
    ]


def request_problem(raw: bytes, tokens: int) -> str | None:
    """Why the request body ``raw`` is not the completion served (``None``: it is).

    The completion served is a streamed chat completion asking for the usage chunk and
    ``tokens`` output tokens (``max_tokens`` or ``max_completion_tokens``).
    """
    try:
        request: Any = json.loads(raw)
    except ValueError:
        return "the body is not JSON"
    if not isinstance(request, dict):
        return "the body is not a JSON object"
    if request.get("stream") is not True:
        return "stream must be true"
    if request.get("stream_options") != {"include_usage": True}:
        return "stream_options must be {'include_usage': true}"
    cap = request.get("max_tokens", request.get("max_completion_tokens"))
    if cap != tokens:
        return f"max_tokens must be {tokens}, got {cap!r}"
    if not request.get("messages"):
        return "messages are missing"
    return None


def refusal_body(message: str) -> bytes:
    """The body of the 400 answer to a request that is not the completion served."""
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return json.dumps({"error": error}).encode()


def _handler(tokens: int) -> type[BaseHTTPRequestHandler]:
    events = completion_events(tokens)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            problem = request_problem(raw, tokens)
            if self.path != "/v1/chat/completions":
                problem = f"unknown path {self.path}"
            if problem is not None:
                self._refuse(problem)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for event in events:
                    self.wfile.write(event)  # unbuffered: one send per event
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _refuse(self, message: str) -> None:
            data = refusal_body(message)
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.wfile.write(data)

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until stdin ends (the parent closes it, or exits) or the process is stopped."""
    parser = argparse.ArgumentParser(prog="python bench/sse_server.py")
    parser.add_argument("--tokens", type=int, default=200)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(args.tokens))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"http://{host!s}:{port}", flush=True)
    stop_at_eof(server.shutdown)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def stop_at_eof(stop: Callable[[], object]) -> None:
    """Call ``stop`` from a daemon thread once stdin ends.

    The parent holds the server's stdin: when it ends (the parent closes it, or exits without
    stopping the server), the server stops.
    """

    def wait() -> None:
        sys.stdin.read()
        stop()

    threading.Thread(target=wait, daemon=True).start()


class SSEServerProcess:
    """`main` in a child process; use as a context manager, read `url`."""

    what: ClassVar[str] = "the SSE server"
    """What a failure to start names."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.url = ""
        self._process: subprocess.Popen[str] | None = None

    def command(self) -> list[str]:
        """The child's command line; it runs in the repository's root."""
        return [sys.executable, str(Path(__file__)), "--tokens", str(self.tokens)]

    def __enter__(self) -> Self:
        self._process = subprocess.Popen(
            self.command(),
            cwd=Path(__file__).resolve().parent.parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("http://"):
            self.__exit__()
            raise RuntimeError(f"{self.what} did not start (it printed {line!r})")
        self.url = line
        return self

    def __exit__(self, *exc: object) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the server stops at the end of its stdin
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()


if __name__ == "__main__":
    sys.exit(main())
