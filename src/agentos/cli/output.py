"""What ``agentos chat`` prints: replies on stdout, everything else on stderr, as plain text.

Replies go to stdout with no markup and no ANSI codes (`ReplyOutput`), so ``agentos chat "..." >
answer.txt`` captures the answer alone; prompts, ``--show-state`` and ``--recall`` lines and
errors go to stderr through a rich `Console`, each printed without markup parsing or wrapping.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.text import Text

from agentos.memory.scoring import ScoredTrace

from .chat_session import ChatSession, TurnState

__all__ = ["ReplyOutput", "print_error", "print_recall", "print_state", "read_line"]

_PROMPT = Text("you> ", style="bold cyan")


class ReplyOutput:
    """Stdout for replies: plain writes, flushed per delta, remembering where the line stands."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._at_line_start = True

    def write(self, text: str) -> None:
        """Write ``text`` now (a reply's delta); nothing for an empty one."""
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


def print_error(err: Console, message: str) -> None:
    """One line on stderr; no markup parsing (``agentos[local]`` must survive) and no wrapping."""
    line = Text("error: ", style="bold red")
    line.append(" ".join(message.split()))
    err.print(line, soft_wrap=True, highlight=False)


def read_line(err: Console) -> str | None:
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


def print_state(err: Console, state: TurnState) -> None:
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


def print_recall(err: Console, chat: ChatSession, query: str, found: list[ScoredTrace]) -> None:
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
