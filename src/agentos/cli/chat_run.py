"""Running ``agentos chat``: open the session, converse, and map every outcome to an exit code.

Exit codes: 0 on success (an interactive chat ended by ``/exit``, ``/quit``, Ctrl-D or Ctrl-C
included), 1 for an unexpected failure, 2 for a usage or configuration error (an unknown
provider or persona, a missing key or extra, a bad option, a provider failure: any `GMIError`; in
an interactive chat a provider failure is reported and the chat goes on), 130 when Ctrl-C stops a
one-shot answer. Errors print as one line; ``AGENTOS_DEBUG=1`` lets an unexpected exception's
traceback through.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

from rich.console import Console

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.embedding_resolve import resolve_embedder
from agentos.llm.errors import ProviderError
from agentos.llm.local import LocalModel
from agentos.llm.resolve import resolve_model

from .chat_session import ChatSession, ChatSettings, check_settings, load_persona, persona_model
from .output import ReplyOutput, print_error, print_recall, print_state, read_line

__all__ = [
    "EXIT_COMMANDS",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "run_chat",
]

EXIT_OK = 0
"""The command did what was asked."""
EXIT_ERROR = 1
"""Something unexpected failed (a bug or the environment, not the user's input)."""
EXIT_USAGE = 2
"""The options, the configuration or the provider refused the call (a `GMIError`)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C stopped a one-shot answer (128 + SIGINT, as shells report it)."""

EXIT_COMMANDS = frozenset({"/exit", "/quit"})
"""Lines that end an interactive chat."""

_T = TypeVar("_T")

_DEBUG_VALUES = frozenset({"1", "true", "yes", "on"})
_PROVIDER_FAILURES = frozenset(
    {
        GMIErrorCode.LLM_PROVIDER_ERROR,
        GMIErrorCode.LLM_PROVIDER_UNAVAILABLE,
        GMIErrorCode.PROVIDER_ERROR,
        GMIErrorCode.RATE_LIMIT_EXCEEDED,
        GMIErrorCode.TIMEOUT,
        # Another terminal's turn on the same --session: this one can try again after it.
        GMIErrorCode.SESSION_BUSY,
    }
)


def run_chat(settings: ChatSettings, message: str | None, err: Console) -> int:
    """Run ``agentos chat`` and return its exit code; every expected failure becomes one line."""
    try:
        # One runner for the whole chat: its loop outlives each turn, and while a turn runs it
        # turns Ctrl-C into a cancellation (which aborts the model call) then KeyboardInterrupt.
        with asyncio.Runner() as runner:
            chat = runner.run(_open_chat(settings, err))
            try:
                return _converse(runner, chat, message, err)
            finally:
                runner.run(chat.close())
    except GMIError as exc:
        print_error(err, exc.message)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader left (``| head``): stop quietly, and keep Python's exit-time flush of
        # stdout from raising again.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("AGENTOS_DEBUG", "").strip().lower() in _DEBUG_VALUES:
            raise
        print_error(
            err,
            f"unexpected {type(exc).__name__}: {exc} (set AGENTOS_DEBUG=1 for the traceback)",
        )
        return EXIT_ERROR


async def _open_chat(settings: ChatSettings, err: Console) -> ChatSession:
    """Check the options, resolve the persona, the model and the embedder; open the session.

    The local model is loaded now under a status line: a missing or broken model file fails
    before the first prompt, and the first reply streams at once instead of after a pause.
    """
    check_settings(settings)
    persona = load_persona(settings.persona) if settings.persona is not None else None
    provider, name = persona_model(settings, persona)
    model = resolve_model(provider, name, base_url=settings.base_url)
    if isinstance(model, LocalModel):
        with err.status("Loading the local model…"):
            await model.load()
    embedder = resolve_embedder() if settings.cognition == "full" else None
    return ChatSession.open(settings, model, persona=persona, embedder=embedder)


def _converse(runner: asyncio.Runner, chat: ChatSession, message: str | None, err: Console) -> int:
    """The one-shot turn or the interactive chat, then ``--recall``; the reply line ended."""
    out = ReplyOutput(sys.stdout)
    try:
        if message is None:
            code = _interactive(runner, chat, out, err)
        else:
            _turn(runner, chat, message, out, err, one_shot=True)
            code = EXIT_OK
        if chat.settings.recall is not None:
            query = chat.settings.recall
            print_recall(err, chat, query, runner.run(chat.recall(query)))
        return code
    finally:
        out.end_line()


def _interactive(runner: asyncio.Runner, chat: ChatSession, out: ReplyOutput, err: Console) -> int:
    """Read, stream, repeat, until ``/exit``, ``/quit``, Ctrl-D or Ctrl-C."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  # line editing and history for input()
        err.print("Type /exit or press Ctrl-D to leave.", style="dim", highlight=False)
    while True:
        line = read_line(err)
        if line is None:
            return EXIT_OK
        text = line.strip()
        if not text:
            continue
        if text in EXIT_COMMANDS:
            return EXIT_OK
        try:
            _turn(runner, chat, text, out, err)
        except KeyboardInterrupt:
            out.end_line()
            return EXIT_OK
        except GMIError as exc:
            # A provider failure need not end the conversation (the session keeps no failed
            # turn that produced nothing); configuration and option errors still end it.
            if not _is_provider_failure(exc):
                raise
            out.end_line()
            print_error(err, exc.message)


def _turn(
    runner: asyncio.Runner,
    chat: ChatSession,
    text: str,
    out: ReplyOutput,
    err: Console,
    *,
    one_shot: bool = False,
) -> None:
    """One turn: the reply streamed to stdout, its line ended, then ``--show-state``."""
    before = chat.events()
    _run(runner, chat.turn(text, out.write))
    if one_shot:
        out.write("\n")  # a one-shot answer always ends with a newline of its own, like print
    else:
        out.end_line()
    if chat.settings.show_state:
        print_state(err, _run(runner, chat.state(before)))


def _run(runner: asyncio.Runner, work: Coroutine[Any, Any, _T]) -> _T:
    """``runner.run(work)``, and when Ctrl-C stops it, ``work`` cancelled and settled first.

    A GMI streams from a task of its own: a KeyboardInterrupt raised there stops the loop with
    ``work`` still pending, which must not run on (and write) when the loop runs again.
    """
    task = runner.get_loop().create_task(work)

    async def wait() -> _T:
        return await task

    try:
        return runner.run(wait())
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            runner.run(asyncio.wait([task]))
        raise


def _is_provider_failure(exc: GMIError) -> bool:
    """Whether one failed call (a rate limit, a network blip) should not end a chat."""
    return isinstance(exc, ProviderError) or exc.code in _PROVIDER_FAILURES
