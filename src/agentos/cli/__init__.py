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

Exit codes (`agentos.cli.chat_run`): 0 on success, 1 for an unexpected failure, 2 for a usage,
configuration or provider error, 130 when Ctrl-C stops a one-shot answer.

The command's parts: `agentos.cli.commands` (the typer application), `agentos.cli.options` (its
arguments), `agentos.cli.chat_run` (running a chat, exit codes), `agentos.cli.output` (what it
prints) and `agentos.cli.chat_session` (the session it talks to).
"""

from agentos.cli.chat_run import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from agentos.cli.chat_session import ChatSession, ChatSettings
from agentos.cli.commands import app
from agentos.cli.options import Cognition

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


def main() -> None:
    """Run the ``agentos`` command (the console-script entry point)."""
    app()


if __name__ == "__main__":  # pragma: no cover - ``python -m agentos.cli``
    main()
