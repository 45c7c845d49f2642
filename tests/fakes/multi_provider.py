"""Three loopback servers, one per wire format, for end-to-end tests of the completion gateway.

`ProviderServers` runs an OpenAI, an Anthropic and a Gemini `LoopbackServer` side by side, each
answering from a script of `Reply`s that a test sets with `ProviderServers.play()`; a request
beyond the script gets an HTTP 418 (a status no gateway falls back on), so an unexpected request
fails the test loudly instead of being served. Each `ScriptedServer` shows the requests it
received since its script was last set, so one set of servers can serve a whole test module.

`ProviderServers.as_fallback_legs()` points each provider's environment at its server: the key
variable agentos reads (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``) and the
base-URL variable the provider's SDK reads when agentos passes it none (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``), which is how a fallback leg, built from
the environment, reaches a loopback server.

`OpenAIWire`, `AnthropicWire` and `GeminiWire` build the same scripted situations (a text
answer, a tool call, an HTTP error, an error after text, a reset, a stream without a finish
reason, a stream held open) in each provider's wire format, so a test can be run against each.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import pytest

from fakes import anthropic_server as anthropic_wire
from fakes import gemini_server as gemini_wire
from fakes import openai_server as openai_wire
from fakes.loopback import LoopbackServer, RecordedRequest, Reply

__all__ = [
    "KEYS",
    "AnthropicWire",
    "GeminiWire",
    "OpenAIWire",
    "ProviderServers",
    "ScriptedServer",
    "Wire",
    "provider_servers",
]

KEYS = {"openai": "sk-openai-e2e", "anthropic": "sk-ant-e2e", "gemini": "gemini-key-e2e"}
"""The API key each provider's server expects (from the call or from the environment)."""

# Every variable that could point a provider's SDK somewhere else or lend it other credentials.
_SDK_VARIABLES = (
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_API_VERSION",
)


class ScriptedServer:
    """One loopback server answering from a script; `requests` are the current script's."""

    def __init__(self, name: str, api_path: str = "") -> None:
        self.name = name
        self._api_path = api_path
        self._script: deque[Reply] = deque()
        self._played: list[Reply] = []
        self._first = 0
        self.server = LoopbackServer(self._answer)

    def _answer(self, request: RecordedRequest) -> Reply:
        if self._script:
            return self._script.popleft()
        message = f"no reply scripted for {self.name} request {request.method} {request.path}"
        return Reply(status=418, json={"error": {"message": message, "type": "unscripted"}})

    def play(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order; forget earlier requests."""
        self.release()
        self._script.clear()
        self._script.extend(replies)
        self._played = list(replies)
        self._first = len(self.server.requests)
        self.server.client_disconnected.clear()

    def release(self) -> None:
        """Let every held stream of the script end (their server threads then finish)."""
        for reply in self._played:
            reply.release.set()

    @property
    def url(self) -> str:
        """The server's root, ``http://127.0.0.1:<port>``."""
        return self.server.url

    @property
    def base_url(self) -> str:
        """The base URL a client of this provider takes (OpenAI's includes ``/v1``)."""
        return self.server.url + self._api_path

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received since the script was set."""
        return self.server.requests[self._first :]

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of `requests`."""
        return [request.json for request in self.requests]

    def client_gone(self, timeout: float = 5.0) -> bool:
        """Wait (in the calling thread) until a client left a stream; whether it did."""
        return self.server.client_disconnected.wait(timeout)


@dataclass
class ProviderServers:
    """The three servers; `play()` scripts them all at once."""

    openai: ScriptedServer
    anthropic: ScriptedServer
    gemini: ScriptedServer

    def by_name(self, provider: str) -> ScriptedServer:
        """The server of ``provider`` (``"openai"``, ``"anthropic"`` or ``"gemini"``)."""
        server: ScriptedServer = getattr(self, provider)
        return server

    def play(
        self,
        *,
        openai: Sequence[Reply] = (),
        anthropic: Sequence[Reply] = (),
        gemini: Sequence[Reply] = (),
    ) -> None:
        """Script every server (a server given nothing answers any request with 418)."""
        self.openai.play(*openai)
        self.anthropic.play(*anthropic)
        self.gemini.play(*gemini)

    def all(self) -> tuple[ScriptedServer, ScriptedServer, ScriptedServer]:
        return self.openai, self.anthropic, self.gemini

    def release(self) -> None:
        for server in self.all():
            server.release()

    def isolate(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Clear every SDK variable that could send a call elsewhere (keys are conftest's)."""
        for variable in _SDK_VARIABLES:
            monkeypatch.delenv(variable, raising=False)

    def as_fallback_legs(self, monkeypatch: pytest.MonkeyPatch, *providers: str) -> None:
        """Point ``providers`` (default: all three) at their servers through the environment."""
        chosen = providers or ("openai", "anthropic", "gemini")
        if "openai" in chosen:
            monkeypatch.setenv("OPENAI_API_KEY", KEYS["openai"])
            monkeypatch.setenv("OPENAI_BASE_URL", self.openai.base_url)
        if "anthropic" in chosen:
            monkeypatch.setenv("ANTHROPIC_API_KEY", KEYS["anthropic"])
            monkeypatch.setenv("ANTHROPIC_BASE_URL", self.anthropic.base_url)
        if "gemini" in chosen:
            monkeypatch.setenv("GEMINI_API_KEY", KEYS["gemini"])
            monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", self.gemini.base_url)


def provider_servers() -> Iterator[ProviderServers]:
    """Start the three servers, yield them, and stop them (body of a module-scoped fixture)."""
    servers = ProviderServers(
        ScriptedServer("openai", "/v1"), ScriptedServer("anthropic"), ScriptedServer("gemini")
    )
    with servers.openai.server, servers.anthropic.server, servers.gemini.server:
        try:
            yield servers
        finally:
            servers.release()


# --- the same situations in each wire format ----------------------------------------------------


class Wire(Protocol):
    """Scripted replies in one provider's wire format."""

    provider: ClassVar[str]
    model: ClassVar[str]

    def text(
        self, *pieces: str, finish: str | None = None, usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        """A whole text answer (``finish``: the provider's own finish reason)."""
        ...

    def tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
        """A whole answer calling one tool."""
        ...

    def status(self, code: int) -> Reply:
        """An HTTP error status with the provider's error body."""
        ...

    def error_after_text(self, text: str) -> Reply:
        """A 200 stream that sends ``text`` and then an error event (a retryable kind)."""
        ...

    def reset_after_text(self, text: str) -> Reply:
        """A 200 stream that sends ``text`` and then resets the connection."""
        ...

    def no_finish(self, text: str) -> Reply:
        """A 200 stream that sends ``text`` and ends cleanly, but without a finish reason."""
        ...

    def hold_after_text(self, text: str) -> Reply:
        """A 200 stream that sends ``text`` and then stays open until the client leaves."""
        ...


@dataclass
class OpenAIWire:
    """Chat Completions (`fakes.openai_server`)."""

    provider: ClassVar[str] = "openai"
    model: ClassVar[str] = "gpt-4o-mini"
    chunks: openai_wire.ChunkMaker = field(default_factory=openai_wire.ChunkMaker)

    def text(
        self, *pieces: str, finish: str | None = None, usage: tuple[int, int] = (12, 5)
    ) -> Reply:
        events = self.chunks.text_events(list(pieces), finish=finish or "stop", usage=usage)
        return openai_wire.stream_reply(events)

    def tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
        raw = json.dumps(arguments)
        call = openai_wire.CallSpec(call_id, name, [raw[: len(raw) // 2], raw[len(raw) // 2 :]])
        return openai_wire.stream_reply(self.chunks.tool_events([call]))

    def status(self, code: int) -> Reply:
        match code:
            case 429:
                return openai_wire.rate_limit_429()
            case 500:
                return openai_wire.server_error_500()
            case 529:
                return openai_wire.overloaded_529()
            case 401:
                return openai_wire.invalid_key_401()
            case 400:
                body = openai_wire.error_body(
                    "Invalid value for 'messages'.", "invalid_request_error", None, "messages"
                )
                return openai_wire.error_reply(400, body)
        body = openai_wire.error_body(f"HTTP {code}", "server_error", None)
        return openai_wire.error_reply(code, body)

    def _billed_text(self, text: str) -> str:
        # Usage on a content chunk, as compatible servers that report usage as they go do (vLLM's
        # continuous usage stats, OpenRouter): a stream cut after it has billed usage to report.
        return self.chunks.chunk({"content": text}, usage=openai_wire.usage_body(11, 2))

    def error_after_text(self, text: str) -> Reply:
        events = [
            self.chunks.role(),
            self._billed_text(text),
            openai_wire.stream_error_event(
                "The server had an error while processing your request.", "server_error", None
            ),
        ]
        return openai_wire.stream_reply(events)

    def reset_after_text(self, text: str) -> Reply:
        events = [self.chunks.role(), self._billed_text(text)]
        return openai_wire.stream_reply(events, reset_after=2)

    def no_finish(self, text: str) -> Reply:
        events = [self.chunks.role(), self.chunks.text(text), openai_wire.DONE]
        return openai_wire.stream_reply(events)

    def hold_after_text(self, text: str) -> Reply:
        events = [self.chunks.role(), self.chunks.text(text), self.chunks.text("never sent")]
        return openai_wire.stream_reply(events, hold_after=2)


@dataclass
class AnthropicWire:
    """The Messages API (`fakes.anthropic_server`)."""

    provider: ClassVar[str] = "anthropic"
    model: ClassVar[str] = "claude-sonnet-5"

    def text(
        self, *pieces: str, finish: str | None = None, usage: tuple[int, int] = (25, 12)
    ) -> Reply:
        events = anthropic_wire.text_stream(
            list(pieces),
            stop_reason=finish or "end_turn",
            model=self.model,
            input_tokens=usage[0],
            output_tokens=usage[1],
        )
        return Reply(events=events)

    def tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
        return Reply(events=anthropic_wire.tool_use_stream([(call_id, name, arguments)]))

    def status(self, code: int) -> Reply:
        error_type = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(code, "api_error")
        return anthropic_wire.error_reply(code, error_type, f"{error_type} ({code})")

    def error_after_text(self, text: str) -> Reply:
        events = [
            anthropic_wire.message_start(model=self.model, input_tokens=25),
            anthropic_wire.text_start(),
            anthropic_wire.text_delta(text),
            anthropic_wire.error_event("overloaded_error", "Overloaded"),
        ]
        return Reply(events=events)

    def reset_after_text(self, text: str) -> Reply:
        events = [
            anthropic_wire.message_start(model=self.model, input_tokens=25),
            anthropic_wire.text_start(),
            anthropic_wire.text_delta(text),
        ]
        return Reply(events=events, reset_after=3)

    def no_finish(self, text: str) -> Reply:
        events = [
            anthropic_wire.message_start(model=self.model, input_tokens=25),
            anthropic_wire.text_start(),
            anthropic_wire.text_delta(text),
            anthropic_wire.block_stop(),
        ]
        return Reply(events=events)

    def hold_after_text(self, text: str) -> Reply:
        events = [
            anthropic_wire.message_start(model=self.model, input_tokens=25),
            anthropic_wire.text_start(),
            anthropic_wire.text_delta(text),
            anthropic_wire.text_delta("never sent"),
        ]
        return Reply(events=events, hold_after=3)


@dataclass
class GeminiWire:
    """``streamGenerateContent`` (`fakes.gemini_server`)."""

    provider: ClassVar[str] = "gemini"
    model: ClassVar[str] = "gemini-2.5-flash"

    def text(
        self, *pieces: str, finish: str | None = None, usage: tuple[int, int] = (12, 7)
    ) -> Reply:
        *first, last = pieces
        events = [gemini_wire.chunk(gemini_wire.text_part(piece)) for piece in first]
        events.append(
            gemini_wire.chunk(
                gemini_wire.text_part(last),
                finish=finish or "STOP",
                usage_metadata=gemini_wire.usage(*usage),
            )
        )
        return gemini_wire.stream_reply(*events)

    def tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
        part = gemini_wire.function_call_part(name, arguments, call_id=call_id)
        done = gemini_wire.chunk(part, finish="STOP", usage_metadata=gemini_wire.usage(20, 9))
        return gemini_wire.stream_reply(done)

    def status(self, code: int) -> Reply:
        status = {
            400: "INVALID_ARGUMENT",
            401: "UNAUTHENTICATED",
            429: "RESOURCE_EXHAUSTED",
            500: "INTERNAL",
        }.get(code, "UNAVAILABLE")
        return gemini_wire.error_reply(code, status, f"{status} ({code})")

    def error_after_text(self, text: str) -> Reply:
        return gemini_wire.stream_reply(
            gemini_wire.chunk(gemini_wire.text_part(text), usage_metadata=gemini_wire.usage(9)),
            gemini_wire.error_body(503, "UNAVAILABLE", "The model is overloaded."),
        )

    def reset_after_text(self, text: str) -> Reply:
        return gemini_wire.stream_reply(
            gemini_wire.chunk(gemini_wire.text_part(text), usage_metadata=gemini_wire.usage(9)),
            gemini_wire.chunk(gemini_wire.text_part("never sent"), finish="STOP"),
            reset_after=1,
        )

    def no_finish(self, text: str) -> Reply:
        return gemini_wire.stream_reply(
            gemini_wire.chunk(gemini_wire.text_part(text), usage_metadata=gemini_wire.usage(9))
        )

    def hold_after_text(self, text: str) -> Reply:
        return gemini_wire.stream_reply(
            gemini_wire.chunk(gemini_wire.text_part(text)),
            gemini_wire.chunk(gemini_wire.text_part("never sent"), finish="STOP"),
            hold_after=1,
        )
