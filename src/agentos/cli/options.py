"""The argument and options of ``agentos chat``, as typer parses them.

Each is an ``Annotated`` type that the command's signature names (`agentos.cli.commands.chat`),
so the command reads as a short list of parameters. Values are checked later, together, by
`agentos.cli.chat_session.check_settings`.
"""

from __future__ import annotations

import enum
from typing import Annotated

import typer

__all__ = [
    "BaseUrlOption",
    "Cognition",
    "CognitionOption",
    "MaxTokensOption",
    "MessageArgument",
    "ModelOption",
    "PersonaOption",
    "ProviderOption",
    "RecallOption",
    "SeedOption",
    "SessionOption",
    "ShowStateOption",
    "SystemOption",
    "TemperatureOption",
    "UserOption",
]


class Cognition(enum.StrEnum):
    """The ``--cognition`` profiles."""

    LIGHT = "light"
    FULL = "full"


MessageArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="MESSAGE",
        help="Answer this one message and exit; without it, chat interactively.",
    ),
]
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider", "-p", help="Provider id (default: the first configured, else local)."
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option("--model", "-m", help="Model id, 'provider:model', or a .gguf path."),
]
SystemOption = Annotated[
    str | None, typer.Option("--system", "-s", help="System instructions for every turn.")
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", help="Sampling seed, for repeatable replies.")
]
MaxTokensOption = Annotated[
    int | None, typer.Option("--max-tokens", help="Most tokens a reply may have.")
]
TemperatureOption = Annotated[
    float | None, typer.Option("--temperature", help="Sampling temperature (0 to 2).")
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option("--base-url", help="Endpoint of an OpenAI-compatible server (Ollama, vLLM, ...)."),
]
PersonaOption = Annotated[
    str | None,
    typer.Option(
        "--persona",
        help="A built-in persona id (such as v_researcher) or a persona JSON file.",
    ),
]
SessionOption = Annotated[
    str,
    typer.Option("--session", help="Session id; the same id later continues its history."),
]
UserOption = Annotated[
    str | None,
    typer.Option("--user", help="End user id: whose memories the session reads and writes."),
]
CognitionOption = Annotated[
    Cognition,
    typer.Option(
        "--cognition",
        help="light, or full: sentiment tracking, metaprompts and cognitive memory.",
    ),
]
ShowStateOption = Annotated[
    bool,
    typer.Option(
        "--show-state", help="After each turn, print the mood and sentiment events (stderr)."
    ),
]
RecallOption = Annotated[
    str | None,
    typer.Option(
        "--recall",
        metavar="QUERY",
        help="When the chat ends, print the user's top memories for QUERY (stderr; "
        "needs --cognition full).",
    ),
]
