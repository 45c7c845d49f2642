"""The ``agentos`` command line: the typer application and its commands.

``agentos --version`` prints the version; ``agentos chat`` is described in `agentos.cli` and run
by `agentos.cli.chat_run.run_chat`.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from agentos import __version__

from .chat_run import run_chat
from .chat_session import DEFAULT_SESSION, ChatSettings
from .options import (
    BaseUrlOption,
    Cognition,
    CognitionOption,
    MaxTokensOption,
    MessageArgument,
    ModelOption,
    PersonaOption,
    ProviderOption,
    RecallOption,
    SeedOption,
    SessionOption,
    ShowStateOption,
    SystemOption,
    TemperatureOption,
    UserOption,
)

__all__ = ["app", "chat"]

app = typer.Typer(
    name="agentos",
    help="agentos: a runtime for stateful LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    # Our own handlers print one line per error; typer's pretty tracebacks would bypass them.
    pretty_exceptions_enable=False,
)
"""The ``agentos`` command (`agentos.cli.main` runs it)."""


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
    message: MessageArgument = None,
    provider: ProviderOption = None,
    model: ModelOption = None,
    system: SystemOption = None,
    seed: SeedOption = None,
    max_tokens: MaxTokensOption = None,
    temperature: TemperatureOption = None,
    base_url: BaseUrlOption = None,
    persona: PersonaOption = None,
    session: SessionOption = DEFAULT_SESSION,
    user: UserOption = None,
    cognition: CognitionOption = Cognition.LIGHT,
    show_state: ShowStateOption = False,
    recall: RecallOption = None,
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
    raise typer.Exit(run_chat(settings, message, Console(stderr=True)))
