"""The `agentos` command (DESIGN.md §3: the cli is rank 7, above the api it drives).

``agentos chat MESSAGE`` streams one answer; ``agentos chat`` alone opens an interactive chat that
keeps the conversation. Replies go to stdout as plain text (no markup, no ANSI codes), so
``agentos chat "..." > answer.txt`` captures the answer alone; prompts, the loading status and
errors go to stderr.

Exit codes: 0 on success (an interactive chat ended by ``/exit``, ``/quit``, Ctrl-D or Ctrl-C
included), 1 for an unexpected failure, 2 for a usage or configuration error (an unknown
provider, a missing key or extra, a bad option, a provider failure: any `GMIError`; in an
interactive chat a provider failure is reported and the chat goes on), 130 when Ctrl-C stops a
one-shot answer. Errors print as one line; ``AGENTOS_DEBUG=1`` lets an unexpected
exception's traceback through.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, TextIO

import typer
from rich.console import Console
from rich.text import Text

from agentos import __version__
from agentos.api import stream_text
from agentos.core.errors import GMIError
from agentos.core.messages import Message
from agentos.llm.errors import ProviderError
from agentos.llm.local import LocalModel
from agentos.llm.model import ChatModel, closing_stream
from agentos.llm.resolve import resolve_model

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "ChatSession",
    "ChatSettings",
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

_PROMPT = Text("you> ", style="bold cyan")
_DEBUG_VALUES = frozenset({"1", "true", "yes", "on"})

app = typer.Typer(
    name="agentos",
    help="agentos: a runtime for stateful LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    # Our own handlers print one line per error; typer's pretty tracebacks would bypass them.
    pretty_exceptions_enable=False,
)


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """What ``agentos chat`` was asked for: which model, and the options sent on every turn."""

    provider: str | None = None
    model: str | None = None
    system: str | None = None
    seed: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    base_url: str | None = None


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


@dataclass(slots=True)
class ChatSession:
    """A conversation with one model: every turn sends the earlier ones as ``messages``."""

    model: ChatModel
    settings: ChatSettings
    history: list[Message] = field(default_factory=list)

    async def turn(self, text: str, write: Callable[[str], None]) -> str:
        """Stream the reply to ``text`` through ``write``; keep the exchange once it has finished.

        A failed or interrupted turn is not kept, so the next turn does not answer half a reply.
        """
        stream = stream_text(
            text,
            model=self.model,
            system=self.settings.system,
            messages=self.history,
            seed=self.settings.seed,
            max_tokens=self.settings.max_tokens,
            temperature=self.settings.temperature,
        )
        async with closing_stream(stream.text_stream) as deltas:
            async for delta in deltas:
                write(delta)
        result = await stream.result
        self.history.append(Message.user(text))
        self.history.extend(result.response_messages)
        return result.text


async def _open_model(settings: ChatSettings, err: Console) -> ChatModel:
    """Resolve the model and, for the local one, load it now under a status line.

    Loading up front means a missing or broken model file fails before the first prompt, and
    the first reply streams at once instead of after a silent pause.
    """
    model = resolve_model(settings.provider, settings.model, base_url=settings.base_url)
    if isinstance(model, LocalModel):
        with err.status("Loading the local model…"):
            await model.load()
    return model


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


def _interactive(runner: asyncio.Runner, session: ChatSession, out: _Output, err: Console) -> int:
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
            runner.run(session.turn(text, out.write))
        except KeyboardInterrupt:
            out.end_line()
            return EXIT_OK
        except ProviderError as exc:
            # One failed call (a rate limit, a network blip) need not end the conversation;
            # configuration and option errors are not ProviderErrors and still end it.
            out.end_line()
            _print_error(err, exc.message)
            continue
        out.end_line()


def _run_chat(settings: ChatSettings, message: str | None, err: Console) -> int:
    """Run ``agentos chat`` and return its exit code; every expected failure becomes one line."""
    out = _Output(sys.stdout)
    try:
        # One runner for the whole chat: its loop outlives each turn, and while a turn runs it
        # turns Ctrl-C into a cancellation (which aborts the model call) then KeyboardInterrupt.
        with asyncio.Runner() as runner:
            session = ChatSession(runner.run(_open_model(settings, err)), settings)
            if message is None:
                return _interactive(runner, session, out, err)
            runner.run(session.turn(message, out.write))
            out.write("\n")  # one-shot: the answer always ends with a newline of its own
            return EXIT_OK
    except GMIError as exc:
        out.end_line()
        _print_error(err, exc.message)
        return EXIT_USAGE
    except KeyboardInterrupt:
        out.end_line()
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
        out.end_line()
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
) -> None:
    """Chat with a model: stream the answer to MESSAGE, or chat interactively without one."""
    settings = ChatSettings(provider, model, system, seed, max_tokens, temperature, base_url)
    raise typer.Exit(_run_chat(settings, message, Console(stderr=True)))


def main() -> None:
    """Run the ``agentos`` command (the console-script entry point)."""
    app()


if __name__ == "__main__":  # pragma: no cover - ``python -m agentos.cli``
    main()
