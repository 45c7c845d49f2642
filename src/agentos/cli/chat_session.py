"""What ``agentos chat`` talks to: one session of a `gmi()` agent on durable SQLite stores.

`ChatSettings` holds the command's options. `load_persona()` reads ``--persona`` (a built-in id or
a persona JSON file) and `agent_options()` maps it, with the other options, onto the agent's
``instructions`` (the persona's base system prompt, then ``--system``), ``personality`` (its HEXACO
traits) and ``name``; the persona's default provider and model are used when neither
``--provider`` nor ``--model`` is given (see `persona_model`).

`ChatSession.open()` opens the agentos database (``$AGENTOS_HOME/agentos.db``, DESIGN.md §5.9:
the command's default is durable), a `SQLiteSessionStore` for the history and, with ``--cognition
full`` (cognitive memory on), a `SQLiteMemoryStore` for the memory; then the agent's session
``--session`` for ``--user``. A later ``agentos chat --session <id>`` continues that history, and
a session of the same user recalls what the user said in any earlier one.

``--seed`` and ``--temperature`` reach each model call through `SamplingModel`: a GMI forwards
16 completion option keys, ``seed`` is not one of them (nor does the local model accept it in
``custom_model_params``), and neither the agent's options nor a session's ``send()`` take a
temperature, so the chat wraps the model it resolved and sets both on every request that has
none. ``--max-tokens`` is the agent's ``max_tokens`` (the persona's completion options).

Leaving the chat shuts the session's GMI down but does not close the session: closing would end
it, and the point of the durable store is that the next ``agentos chat --session`` picks it up.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentos.api.agent_options import AgentOptions
from agentos.api.cognition import CognitionProfile
from agentos.api.gmi_agent import GmiAgent, gmi
from agentos.api.session import AgentSession
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.embedding import Embedder
from agentos.llm.model import ChatModel, ModelChunk, ModelRequest, WrapperModel, closing_stream
from agentos.memory.config import CognitiveMemoryConfig, RetrievalOptions
from agentos.memory.manager import CognitiveMemoryManager
from agentos.memory.scope import SessionScopes
from agentos.memory.scoring import ScoredTrace
from agentos.memory.sqlite_store import SQLiteMemoryStore
from agentos.persona.builtins import BUILT_IN_PERSONAS, get_built_in_persona
from agentos.persona.definition import PersonaDefinition
from agentos.storage.session_store import SQLiteSessionStore
from agentos.storage.sqlite import Database, open_database
from agentos.substrate.events import GMIEvent
from agentos.substrate.trace import ReasoningEntryType, ReasoningTraceEntry

__all__ = [
    "DEFAULT_SESSION",
    "RECALL_TOP_K",
    "ChatSession",
    "ChatSettings",
    "SamplingModel",
    "TurnState",
    "agent_options",
    "load_persona",
    "moods_set",
    "persona_model",
]

DEFAULT_SESSION = "default"
"""The session ``agentos chat`` talks in unless ``--session`` names another."""

RECALL_TOP_K = 3
"""How many memories ``--recall`` prints."""


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """What ``agentos chat`` was asked for: the model, the agent, the session, what to show."""

    provider: str | None = None
    model: str | None = None
    system: str | None = None
    seed: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    base_url: str | None = None
    persona: str | None = None
    session: str = DEFAULT_SESSION
    user: str | None = None
    cognition: CognitionProfile = "light"
    show_state: bool = False
    recall: str | None = None


def _invalid(option: str, why: str, code: GMIErrorCode = GMIErrorCode.INVALID_ARGUMENT) -> GMIError:
    return GMIError(f"{option}: {why}", code, {"option": option})


def check_settings(settings: ChatSettings) -> None:
    """Refuse, before anything is opened, what no turn could use (a `GMIError` naming it)."""
    temperature = settings.temperature
    if temperature is not None and not (math.isfinite(temperature) and 0 <= temperature <= 2):
        raise _invalid("temperature", f"must be from 0 to 2, got {temperature!r}")
    if not settings.session.strip():
        raise _invalid("session", "must not be empty")
    for name in ("model", "provider", "persona", "base_url"):
        value = getattr(settings, name)
        if value is not None and not value.strip():
            # An empty --model would silently pick the default model: refuse it instead.
            raise _invalid(name, "must not be empty (leave the option out for the default)")
    if settings.user is not None and not settings.user.strip():
        raise _invalid("user", "must not be empty")
    if settings.recall is not None and settings.cognition != "full":
        raise _invalid("recall", "needs cognitive memory: add --cognition full")


def load_persona(value: str) -> PersonaDefinition:
    """The persona ``--persona`` names: a built-in persona's id, or a persona JSON file's path.

    A value that names an existing file, or ends in ``.json``, is read as a file; anything else
    is a built-in id. Raises `GMIError` (``PERSONA_NOT_FOUND`` for an unknown id, naming the
    built-in ids; ``INVALID_ARGUMENT`` for a file that cannot be read or is not a persona).
    """
    path = Path(value).expanduser()
    if path.is_file() or value.lower().endswith(".json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _invalid("persona", f"cannot read {value}: {exc}") from exc
        if not isinstance(data, dict):
            raise _invalid("persona", f"{value} holds no JSON object")
        try:
            return PersonaDefinition.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "persona"
            raise _invalid("persona", f"{value}: {where}: {first['msg']}") from exc
    try:
        return get_built_in_persona(value)
    except GMIError as exc:
        known = ", ".join(persona.id for persona in BUILT_IN_PERSONAS)
        raise GMIError(
            f"persona: no built-in persona {value!r} and no such file (built-in: {known})",
            exc.code,
            {"option": "persona"},
        ) from exc


def persona_model(
    settings: ChatSettings, persona: PersonaDefinition | None
) -> tuple[str | None, str | None]:
    """The (provider, model) to resolve: the options', else the persona's defaults.

    The persona's pair is used only when neither ``--provider`` nor ``--model`` is given, so a
    provider from the command line is never paired with a model the persona chose for another.
    """
    if settings.provider is not None or settings.model is not None or persona is None:
        return settings.provider, settings.model
    return persona.default_provider_id, persona.default_model_id


def agent_options(
    settings: ChatSettings,
    persona: PersonaDefinition | None,
    model: ChatModel,
    *,
    store: SQLiteSessionStore | None = None,
    memory: dict[str, Any] | None = None,
) -> AgentOptions:
    """The `gmi()` options of the chat's agent (see the module doc for the persona mapping)."""
    parts = [persona.system_prompt_text() if persona is not None else "", settings.system or ""]
    instructions = "\n\n".join(part.strip() for part in parts if part and part.strip())
    options: AgentOptions = {"model": model, "cognition": settings.cognition}
    if instructions:
        options["instructions"] = instructions
    if persona is not None:
        if persona.name.strip():
            options["name"] = persona.name.strip()
        if persona.hexaco_traits:
            options["personality"] = persona.hexaco_traits
    if settings.max_tokens is not None:
        options["max_tokens"] = settings.max_tokens
    if store is not None:
        options["store"] = store
    if memory is not None:
        options["memory"] = memory
    return options


class SamplingModel(WrapperModel):
    """A `ChatModel` that fills ``seed`` and ``temperature`` into requests that carry none.

    A GMI forwards neither (see the module doc), so the chat sets them on its model. A request
    with its own value keeps it (a metaprompt's temperature 0.3, for one). Every other attribute
    (``check_options``, ``load``, ...) is the inner model's.
    """

    def __init__(
        self, inner: ChatModel, *, seed: int | None = None, temperature: float | None = None
    ) -> None:
        super().__init__(inner)
        self.seed = seed
        self.temperature = temperature

    def fill(self, request: ModelRequest) -> ModelRequest:
        """``request`` with the seed and temperature set where it has none."""
        options = request.options
        changes: dict[str, Any] = {}
        if self.seed is not None and options.seed is None:
            changes["seed"] = self.seed
        if self.temperature is not None and options.temperature is None:
            changes["temperature"] = self.temperature
        if not changes:
            return request
        return dataclasses.replace(request, options=dataclasses.replace(options, **changes))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """The inner model's step on the filled request."""
        async with closing_stream(self.inner.stream(self.fill(request))) as chunks:
            async for chunk in chunks:
                yield chunk


@dataclass(frozen=True, slots=True)
class TurnState:
    """The GMI after a turn: its mood, the metaprompts that set it, the events the turn raised.

    ``mood_set_by`` names each metaprompt of the turn that applied a mood (its id), in order;
    empty when none did.
    """

    mood: str
    events: tuple[GMIEvent, ...]
    mood_set_by: tuple[str, ...] = ()


def moods_set(entries: Sequence[ReasoningTraceEntry]) -> list[tuple[str, str]]:
    """``(metaprompt id, mood)`` for each metaprompt that applied a mood in the last turn.

    ``entries`` is the GMI's reasoning trace (its last entries are enough); the last turn is
    the one its last ``INTERACTION_START`` opened, and a metaprompt's changes are recorded under
    that turn's id (`MetapromptExecutor`).
    """
    starts = [e for e in entries if e.type is ReasoningEntryType.INTERACTION_START]
    if not starts:
        return []
    turn_id = starts[-1].turn_id
    found: list[tuple[str, str]] = []
    for entry in entries:
        if entry.turn_id != turn_id or entry.type is not ReasoningEntryType.STATE_CHANGE:
            continue
        details = entry.details or {}
        changes = details.get("changes") or {}
        if "mood" in changes:
            found.append((str(details.get("metaprompt_id")), str(changes["mood"])))
    return found


class ChatSession:
    """One session of the chat's `gmi()` agent, with the database its stores live in."""

    def __init__(
        self,
        agent: GmiAgent,
        session: AgentSession,
        settings: ChatSettings,
        *,
        database: Database | None = None,
        memory_store: SQLiteMemoryStore | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.agent = agent
        self.session = session
        self.settings = settings
        self._database = database
        self._memory_store = memory_store
        self._embedder = embedder

    @classmethod
    def open(
        cls,
        settings: ChatSettings,
        model: ChatModel,
        *,
        persona: PersonaDefinition | None = None,
        embedder: Embedder | None = None,
    ) -> ChatSession:
        """Open the stores in the agentos database, build the agent and open the session.

        ``embedder`` is the cognitive memory's (``--cognition full``); the chat resolves it so
        ``--recall`` reads the memory with the same one.
        """
        database = open_database()
        try:
            store = SQLiteSessionStore(database)
            memory_store = None
            memory: dict[str, Any] | None = None
            if settings.cognition == "full":
                memory_store = SQLiteMemoryStore(database)
                memory = {"store": memory_store}
                if embedder is not None:
                    memory["embedder"] = embedder
            if settings.seed is not None or settings.temperature is not None:
                model = SamplingModel(model, seed=settings.seed, temperature=settings.temperature)
            agent = gmi(**agent_options(settings, persona, model, store=store, memory=memory))
            session = agent.session(settings.session, user_id=settings.user)
        except BaseException:
            database.close()
            raise
        return cls(
            agent,
            session,
            settings,
            database=database,
            memory_store=memory_store,
            embedder=embedder,
        )

    async def turn(self, text: str, write: Callable[[str], None]) -> str:
        """Stream the reply to ``text`` through ``write``; the session's store keeps the turn."""
        stream = self.session.stream(text)
        async with closing_stream(stream.text_stream) as deltas:
            async for delta in deltas:
                write(delta)
        result = await stream.result
        return result.text

    def events(self) -> list[GMIEvent]:
        """The events the session's GMI keeps (none before its first turn)."""
        found = self.session.gmi
        return found.events.events() if found is not None else []

    async def state(self, before: list[GMIEvent]) -> TurnState:
        """The mood once the turn's metaprompts have run, and the events not in ``before``."""
        found = self.session.gmi
        if found is None:
            return TurnState("neutral", ())
        await found.wait_for_metaprompts()  # a sentiment metaprompt may change the mood
        seen = {id(event) for event in before}
        raised = tuple(event for event in found.events.events() if id(event) not in seen)
        setters = tuple(metaprompt for metaprompt, _ in moods_set(found.trace.entries(last=50)))
        return TurnState(found.mood.value, raised, setters)

    @property
    def memory_user(self) -> str:
        """Whose memories ``--recall`` reads: the user id, else the session id (as the GMI's)."""
        return self.settings.user or self.session.scope_id

    async def recall(self, query: str, top_k: int = RECALL_TOP_K) -> list[ScoredTrace]:
        """The user's top memories for ``query``, through the memory's own retrieval.

        Reads the agent's durable memory store (the one its turns encode into) with the same
        embedder, limited to the user's scope: what the user said in any of their sessions (or,
        without ``--user``, this session's own scope: DESIGN.md §5.17).
        """
        if self._memory_store is None or self._embedder is None:
            raise _invalid("recall", "needs cognitive memory: add --cognition full")
        manager = CognitiveMemoryManager(
            CognitiveMemoryConfig(embedder=self._embedder, store=self._memory_store)
        )
        user_scope = SessionScopes.of(self.session.scope_id, self.settings.user).user
        options = RetrievalOptions(top_k=top_k, scopes=[user_scope], neutral_mood=True)
        result = await manager.retrieve(query, options=options)
        return result.retrieved

    async def close(self) -> None:
        """Shut the session's GMI down and close the database; the session stays open."""
        try:
            found = self.session.gmi
            if found is not None:
                await found.shutdown()
        finally:
            if self._database is not None:
                self._database.close()
                self._database = None
