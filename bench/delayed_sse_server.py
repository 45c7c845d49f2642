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
import sys
from collections.abc import Sequence
from typing import ClassVar

from bench.sse_server import (
    SSEServerProcess,
    completion_events,
    refusal_body,
    request_problem,
    stop_at_eof,
)

__all__ = ["BACKLOG", "DelayedSSEServerProcess", "main"]

BACKLOG = 4096
"""The listen backlog: every client of a thousand-connection burst is queued, none refused."""

_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Connection: close\r\n\r\n"
)


def _refusal(message: str) -> bytes:
    data = refusal_body(message)
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
        problem = request_problem(body, tokens)
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
    stop_at_eof(lambda: loop.call_soon_threadsafe(stopped.set))
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

    what: ClassVar[str] = "the delayed SSE server"

    def __init__(self, tokens: int, delay: float) -> None:
        super().__init__(tokens)
        self.delay = delay

    def command(self) -> list[str]:
        # Not ``-m``: the bench package imports this module first, and runpy warns of that.
        start = "import sys; from bench.delayed_sse_server import main; sys.exit(main())"
        options = ["--tokens", str(self.tokens), "--delay", str(self.delay)]
        return [sys.executable, "-c", start, *options]


if __name__ == "__main__":
    sys.exit(main())
