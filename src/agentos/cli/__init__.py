"""The `agentos` command (DESIGN.md §3: the cli is rank 7, above the api it drives).

``agentos chat MESSAGE`` streams one answer; ``agentos chat`` alone opens an interactive chat.
Either talks to one session of a `gmi()` agent (`agentos.cli.chat_session`): ``--persona`` (a
built-in id or a persona JSON file) gives the agent its instructions, personality, name and
default model; ``--session`` (``default``) and ``--user`` pick the session, whose history is kept
in the agentos SQLite database (``$AGENTOS_HOME/agentos.db``), so a later ``agentos chat
--session <id>`` continues it; ``--cognition full`` turns on sentiment tracking, metaprompts and
cognitive memory, also kept in that database. ``--show-state`` prints the GMI's mood and the
sentiment events of each turn after it; ``--recall QUERY`` prints the user's top memories for
QUERY, from the memory's own retrieval, when the chat ends.

Replies go to stdout as plain text (no markup, no ANSI codes), so ``agentos chat "..." >
answer.txt`` captures the answer alone; prompts, the loading status, ``--show-state`` and
``--recall`` lines and errors go to stderr.

Exit codes: 0 on success (an interactive chat ended by ``/exit``, ``/quit``, Ctrl-D or Ctrl-C
included), 1 for an unexpected failure, 2 for a usage or configuration error (an unknown
provider or persona, a missing key or extra, a bad option, a provider failure: any `GMIError`; in
an interactive chat a provider failure is reported and the chat goes on), 130 when Ctrl-C stops a
one-shot answer. Errors print as one line; ``AGENTOS_DEBUG=1`` lets an unexpected
exception's traceback through.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import sys
from collections.abc import Coroutine
from typing import Annotated, Any, TextIO, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from agentos import __version__
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.embedding_resolve import resolve_embedder
from agentos.llm.errors import ProviderError
from agentos.llm.local import LocalModel
from agentos.llm.resolve import resolve_model
from agentos.memory.scoring import ScoredTrace

from .chat_session import (
    DEFAULT_SESSION,
    ChatSession,
    ChatSettings,
    TurnState,
    check_settings,
    load_persona,
    persona_model,
)

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "ChatSession",
    "ChatSettings",
    "Cognition",
    "app",
    "main",
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

_PROMPT = Text("you> ", style="bold cyan")
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

app = typer.Typer(
    name="agentos",
    help="agentos: a runtime for stateful LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    # Our own handlers print one line per error; typer's pretty tracebacks would bypass them.
    pretty_exceptions_enable=False,
)


class Cognition(enum.StrEnum):
    """The ``--cognition`` profiles."""

    LIGHT = "light"
    FULL = "full"


class _Output:
    """Stdout for replies: plain writes, flushed per delta, remembering where the line stands."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._at_line_start = True

    def write(self, text: str) -> None:
        if not text:
            return
        self._stream.write(text)
        # Flush each delta: streaming is the point, and a pipe would otherwise buffer it all.
        self._stream.flush()
        self._at_line_start = text.endswith("\n")

    def end_line(self) -> None:
        """Finish the current line, so the next prompt or the shell starts on a fresh one."""
        if not self._at_line_start:
            self.write("\n")


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


def _print_error(err: Console, message: str) -> None:
    """One line on stderr; no markup parsing (``agentos[local]`` must survive) and no wrapping."""
    line = Text("error: ", style="bold red")
    line.append(" ".join(message.split()))
    err.print(line, soft_wrap=True, highlight=False)


def _read_line(err: Console) -> str | None:
    """The next line the user types, or ``None`` when they end the chat (Ctrl-D or Ctrl-C)."""
    try:
        line = err.input(_PROMPT)
    except (EOFError, KeyboardInterrupt):
        err.print()  # the shell's prompt must not land after ours
        return None
    if not sys.stdin.isatty():
        # Piped input is not echoed by a terminal; show it so the transcript reads as a dialogue.
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    return line


def _print_state(err: Console, state: TurnState) -> None:
    """``--show-state``: the mood (and the metaprompt that set it), then the turn's events."""
    mood = f"[state] mood: {state.mood}"
    if state.mood_set_by:
        mood += f" (set by metaprompt {', '.join(state.mood_set_by)})"
    err.print(Text(mood), soft_wrap=True, highlight=False)
    for event in state.events:
        line = f"[state] event: {event.event_type.value} ({event.severity})"
        meta = event.metadata
        if meta.sentiment_score is not None:
            line += f", sentiment {meta.sentiment_score:+.2f}"
        if meta.trigger_keywords:
            line += f", keywords: {', '.join(meta.trigger_keywords)}"
        err.print(Text(line), soft_wrap=True, highlight=False)


def _print_recall(err: Console, chat: ChatSession, query: str, found: list[ScoredTrace]) -> None:
    """``--recall``: the user's top memories for the query, as the memory returned them."""
    header = f"Recalled from memory (user {chat.memory_user!r}, query {query!r}):"
    err.print(Text(header), soft_wrap=True, highlight=False)
    if not found:
        err.print(Text("  (nothing)"), soft_wrap=True, highlight=False)
    for scored in found:
        trace = scored.trace
        text = " ".join(trace.content.split())
        line = f"  - {text}  [{trace.type.value}, score {scored.score:.2f}]"
        err.print(Text(line), soft_wrap=True, highlight=False)


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


def _turn(
    runner: asyncio.Runner,
    chat: ChatSession,
    text: str,
    out: _Output,
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
        _print_state(err, _run(runner, chat.state(before)))


def _is_provider_failure(exc: GMIError) -> bool:
    """Whether one failed call (a rate limit, a network blip) should not end a chat."""
    return isinstance(exc, ProviderError) or exc.code in _PROVIDER_FAILURES


def _interactive(runner: asyncio.Runner, chat: ChatSession, out: _Output, err: Console) -> int:
    """Read, stream, repeat, until ``/exit``, ``/quit``, Ctrl-D or Ctrl-C."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  # line editing and history for input()
        err.print("Type /exit or press Ctrl-D to leave.", style="dim", highlight=False)
    while True:
        line = _read_line(err)
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
            _print_error(err, exc.message)


def _converse(runner: asyncio.Runner, chat: ChatSession, message: str | None, err: Console) -> int:
    """The one-shot turn or the interactive chat, then ``--recall``; the reply line ended."""
    out = _Output(sys.stdout)
    try:
        if message is None:
            code = _interactive(runner, chat, out, err)
        else:
            _turn(runner, chat, message, out, err, one_shot=True)
            code = EXIT_OK
        if chat.settings.recall is not None:
            query = chat.settings.recall
            _print_recall(err, chat, query, runner.run(chat.recall(query)))
        return code
    finally:
        out.end_line()


def _run_chat(settings: ChatSettings, message: str | None, err: Console) -> int:
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
        _print_error(err, exc.message)
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
        _print_error(
            err,
            f"unexpected {type(exc).__name__}: {exc} (set AGENTOS_DEBUG=1 for the traceback)",
        )
        return EXIT_ERROR


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"agentos {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Show the version and exit.",
            callback=_show_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """agentos: a runtime for stateful LLM agents."""


@app.command()
def chat(
    message: Annotated[
        str | None,
        typer.Argument(
            metavar="MESSAGE",
            help="Answer this one message and exit; without it, chat interactively.",
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider", "-p", help="Provider id (default: the first configured, else local)."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="Model id, 'provider:model', or a .gguf path."),
    ] = None,
    system: Annotated[
        str | None, typer.Option("--system", "-s", help="System instructions for every turn.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Sampling seed, for repeatable replies.")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Most tokens a reply may have.")
    ] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature (0 to 2).")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="Endpoint of an OpenAI-compatible server (Ollama, vLLM, ...)."
        ),
    ] = None,
    persona: Annotated[
        str | None,
        typer.Option(
            "--persona",
            help="A built-in persona id (such as v_researcher) or a persona JSON file.",
        ),
    ] = None,
    session: Annotated[
        str,
        typer.Option("--session", help="Session id; the same id later continues its history."),
    ] = DEFAULT_SESSION,
    user: Annotated[
        str | None,
        typer.Option("--user", help="End user id: whose memories the session reads and writes."),
    ] = None,
    cognition: Annotated[
        Cognition,
        typer.Option(
            "--cognition",
            help="light, or full: sentiment tracking, metaprompts and cognitive memory.",
        ),
    ] = Cognition.LIGHT,
    show_state: Annotated[
        bool,
        typer.Option(
            "--show-state", help="After each turn, print the mood and sentiment events (stderr)."
        ),
    ] = False,
    recall: Annotated[
        str | None,
        typer.Option(
            "--recall",
            metavar="QUERY",
            help="When the chat ends, print the user's top memories for QUERY (stderr; "
            "needs --cognition full).",
        ),
    ] = None,
) -> None:
    """Chat with a model: stream the answer to MESSAGE, or chat interactively without one."""
    settings = ChatSettings(
        provider,
        model,
        system,
        seed,
        max_tokens,
        temperature,
        base_url,
        persona=persona,
        session=session,
        user=user,
        cognition="full" if cognition is Cognition.FULL else "light",
        show_state=show_state,
        recall=recall,
    )
    raise typer.Exit(_run_chat(settings, message, Console(stderr=True)))


def main() -> None:
    """Run the ``agentos`` command (the console-script entry point)."""
    app()


if __name__ == "__main__":  # pragma: no cover - ``python -m agentos.cli``
    main()
