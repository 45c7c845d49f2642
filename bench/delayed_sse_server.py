"""A loopback Chat Completions server that waits before its first token, for many clients at once.

``python -m bench.delayed_sse_server [--tokens N] [--delay SECONDS]`` binds 127.0.0.1 on a free
port, prints ``http://127.0.0.1:<port>`` on its first stdout line, and answers every
``POST /v1/chat/completions`` as `bench.sse_server` does (the same events: a role chunk, ``N``
one-token content chunks, a finish chunk, a usage-only chunk and ``[DONE]``, one write per
event, then the connection closes), except that it first waits ``--delay`` seconds, as a model
does before its first token. A request that is not a streamed completion asking for the usage
chunk and ``N`` output tokens gets a 400, so a benchmark's two sides send the same request.

Why not `bench.sse_server`: that one serves a connection per thread with the standard library's
listen backlog of 5; a thousand connections opened at once need a deep backlog and cost no
thread each here (one asyncio loop). Like it, it runs in a process of its own (another core),
so the client's timings are the client's. `DelayedSSEServerProcess` starts and stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.sse_server import SSEServerProcess, completion_events

__all__ = ["BACKLOG", "DelayedSSEServerProcess", "main"]

BACKLOG = 4096
"""The listen backlog: every client of a thousand-connection burst is queued, none refused."""

_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Connection: close\r\n\r\n"
)


def _problem(raw: bytes, tokens: int) -> str | None:
    """Why the request body ``raw`` is not the completion served here (``None``: it is)."""
    try:
        request: Any = json.loads(raw)
    except ValueError:
        return "the body is not JSON"
    if not isinstance(request, dict) or not request.get("messages"):
        return "messages are missing"
    if request.get("stream") is not True:
        return "stream must be true"
    if request.get("stream_options") != {"include_usage": True}:
        return "stream_options must be {'include_usage': true}"
    cap = request.get("max_tokens", request.get("max_completion_tokens"))
    if cap != tokens:
        return f"max_tokens must be {tokens}, got {cap!r}"
    return None


def _refusal(message: str) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    data = json.dumps({"error": error}).encode()
    head = (
        f"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + data


async def _serve(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tokens: int, delay: float
) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        body = await reader.readexactly(length)
        path = lines[0].split(" ")[1] if " " in lines[0] else ""
        problem = _problem(body, tokens)
        if path != "/v1/chat/completions":
            problem = f"unknown path {path}"
        if problem is not None:
            writer.write(_refusal(problem))
            return
        await asyncio.sleep(delay)  # the model thinking before its first token
        writer.write(_HEAD)
        for event in completion_events(tokens):
            writer.write(event)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def _run(tokens: int, delay: float) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _serve(reader, writer, tokens, delay)

    server = await asyncio.start_server(serve, "127.0.0.1", 0, backlog=BACKLOG)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"http://{host}:{port}", flush=True)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()

    def wait_for_eof() -> None:
        sys.stdin.read()  # the parent holds our stdin: when it ends, so do we
        loop.call_soon_threadsafe(stopped.set)

    threading.Thread(target=wait_for_eof, daemon=True).start()
    async with server:
        await stopped.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until stdin ends (the parent closes it, or exits) or the process is stopped."""
    parser = argparse.ArgumentParser(prog="python -m bench.delayed_sse_server")
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.05)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_run(args.tokens, args.delay))
    return 0


class DelayedSSEServerProcess(SSEServerProcess):
    """`main` in a child process; use as a context manager, read `url`."""

    def __init__(self, tokens: int, delay: float) -> None:
        super().__init__(tokens)
        self.delay = delay

    def __enter__(self) -> DelayedSSEServerProcess:
        # Not ``-m``: the bench package imports this module first, and runpy warns of that.
        start = "import sys; from bench.delayed_sse_server import main; sys.exit(main())"
        command = [sys.executable, "-c", start]
        command += ["--tokens", str(self.tokens), "--delay", str(self.delay)]
        root = Path(__file__).resolve().parent.parent
        self._process = subprocess.Popen(
            command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("http://"):
            self.__exit__()
            raise RuntimeError(f"the delayed SSE server did not start (it printed {line!r})")
        self.url = line
        return self


if __name__ == "__main__":
    sys.exit(main())
