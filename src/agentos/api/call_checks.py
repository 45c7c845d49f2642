"""The checks of one call's input: its prompt, its per-call options, a session's ids.

Every entry point that starts a model call runs the same checks before it calls a model or
writes anything (issue 11: input is checked before anything is stored): `generate_text()` /
`stream_text()`, an agent's ``generate()`` / ``stream()`` and a session's ``send()`` /
``stream()``, on both runtimes, and ``session(id, user_id=...)`` for the ids. Each refusal is a
`GMIError` (``INVALID_ARGUMENT``) whose ``details["option"]`` names the argument.

- `check_prompt`: text (not blank; no lone surrogate, which is what undecodable bytes become
  and what no provider or store can encode) or a non-empty list of `TextPart` / `ImagePart`.
- `check_call_options`: the value of each per-call option present (which options an entry
  point takes is its own `refuse_unknown_options` call).
- `check_session_ids`: a session id is a non-blank string, a ``user_id`` a string or ``None``;
  a blank ``user_id`` stays allowed (the spec counts ``''`` among the anonymous ids: no learner,
  no end-user id sent).
- `tools_option`: the ``tools`` list with each plain function wrapped as `Tool.from_function`
  does, as pydantic-ai users expect (`agent(tools=[my_func])`).
"""

from __future__ import annotations

import asyncio
import difflib
import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ImagePart, Message, TextPart
from agentos.llm.model import CacheDiagnosticsRequest, ChatModel
from agentos.storage.ledger import UsageLedger
from agentos.tools.tool import Tool

from .abort import AbortSignal
from .structured import structured_spec

__all__ = [
    "cache_diagnostics_request",
    "check_call_options",
    "check_completion_settings",
    "check_number",
    "check_prompt",
    "check_session_ids",
    "check_text",
    "check_tool_choice",
    "invalid",
    "refuse_unknown_options",
    "tools_option",
]

_HOOKS = ("on_before_generation", "on_after_generation", "on_before_tool_execution")
_NAMED_CHOICES = ("auto", "none", "required")


def invalid(option: str, why: str, code: GMIErrorCode = GMIErrorCode.INVALID_ARGUMENT) -> NoReturn:
    """Raise the `GMIError` (``INVALID_ARGUMENT`` unless ``code`` says) that names ``option``."""
    raise GMIError(f"{option}: {why}", code, {"option": option})


def refuse_unknown_options(
    options: Mapping[str, object], known: Collection[str], *, prefix: str = ""
) -> None:
    """Refuse keys of ``options`` that are not in ``known``, each with a did-you-mean hint.

    Raises `GMIError` (``INVALID_ARGUMENT``) naming the first unknown key (alphabetically), with
    ``prefix`` before it (``"learning."`` for the keys of a nested option); the message lists
    every unknown key and the closest known name for each.
    """
    if not options or all(key in known for key in options):
        return  # the common call: no option, or only known ones
    names = sorted(known)
    unknown = sorted(set(options) - set(names))
    if unknown:
        hints = [
            f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)
            for name in unknown
            for close in [difflib.get_close_matches(name, names, n=1)]
        ]
        invalid(prefix + unknown[0], f"unknown option {', '.join(hints)}")


def check_prompt(prompt: object, *, messages_given: bool | None = None) -> None:
    """Refuse a prompt no model call could take, naming ``prompt``.

    A prompt is text or a non-empty list of `TextPart` / `ImagePart`. ``messages_given`` is
    ``None`` for a call that takes no ``messages`` (a session's turn, an agent's call): the
    prompt is then required and may not be blank. `generate_text()` passes whether it got
    messages: with them, a missing or blank prompt adds no user message.
    """
    if prompt is None:
        if messages_given:
            return
        if messages_given is None:
            invalid("prompt", "give a prompt: text or a list of content parts")
        invalid("prompt", "give a prompt, or messages ending with the turn to answer")
    if isinstance(prompt, str):
        if not prompt.strip() and not messages_given:
            invalid("prompt", "the prompt is empty")
        check_text("prompt", prompt)
        return
    if isinstance(prompt, bytes | bytearray):
        invalid("prompt", "must be text (str) or a list of content parts, got bytes: decode it")
    if not isinstance(prompt, list):
        invalid(
            "prompt",
            f"must be text (str) or a list of content parts, got {type(prompt).__name__}",
        )
    if not prompt:
        invalid("prompt", "the list of content parts is empty")
    for position, part in enumerate(prompt):
        if isinstance(part, TextPart):
            if not isinstance(part.text, str):
                invalid("prompt", f"part {position}: text must be a str")
            check_text("prompt", part.text, f"part {position}: ")
        elif isinstance(part, ImagePart):
            if not isinstance(part.url, str) or not part.url.strip():
                invalid("prompt", f"part {position}: an image needs a url")
            check_text("prompt", part.url, f"part {position}: ")
        else:
            invalid(
                "prompt",
                f"part {position} is a {type(part).__name__}, not a content part "
                "(TextPart or ImagePart)",
            )
    blank = all(isinstance(part, TextPart) and not part.text.strip() for part in prompt)
    if blank and not messages_given:
        invalid("prompt", "the prompt is empty")


def check_text(option: str, text: str, where: str = "", *, subject: str = "the text ") -> None:
    """Refuse text with a lone surrogate: no provider, file or database can encode it.

    The message reads ``"<option>: <where><subject>is not valid Unicode: ..."``.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        invalid(
            option,
            f"{where}{subject}is not valid Unicode: a lone surrogate "
            f"(U+{ord(text[exc.start]):04X}) at position {exc.start}, as undecodable bytes "
            "become; decode the input with errors='replace' or fix it",
        )


def check_session_ids(session_id: object, user_id: object) -> None:
    """Refuse a session id that is not a non-blank string, and a ``user_id`` that is not text.

    ``user_id=None`` and a blank ``user_id`` are allowed: the spec counts ``''`` among the
    anonymous user ids (no learner, no end-user id sent).
    """
    if not isinstance(session_id, str):
        invalid("session_id", f"must be a string, got {type(session_id).__name__}")
    if not session_id.strip():
        invalid("session_id", "must not be empty")
    check_text("session_id", session_id)
    if user_id is not None:
        if not isinstance(user_id, str):
            invalid("user_id", f"must be a string or None, got {type(user_id).__name__}")
        check_text("user_id", user_id)


def check_call_options(options: Mapping[str, Any]) -> None:
    """Check the value of each per-call option present (``None`` is unset and passes).

    Raises `GMIError` naming the option: numbers out of their spec ranges (``temperature``
    0..2, ``top_p`` 0..1, the penalties -2..2, ``request_timeout`` > 0), ``max_tokens`` and
    ``max_steps`` below 1, a ``seed`` that is not an integer, ``stop`` that is not a list of
    strings, a bad ``cache_diagnostics`` / ``thinking`` / ``effort`` / ``cache``, hooks that
    are not functions, ``chain_of_thought`` that is neither a bool nor text, ``tools`` (see
    `tools_option`), ``messages`` that are not `Message` objects, a ``response_schema`` that is not
    a pydantic model or a JSON schema of an object, and ``schema_name``, ``block_label``,
    ``user_id``, ``provider``, ``model``, ``usage_ledger`` and ``abort_signal`` of the wrong type.
    """
    if not options:
        return  # the common call, which passes no option at all
    _check_sampling(options)
    cache_diagnostics_request(options.get("cache_diagnostics"))
    check_completion_settings(options)
    _check_behaviour(options)
    _check_value_types(options)


def _check_sampling(options: Mapping[str, Any]) -> None:
    """The sampling numbers, the step and token limits, ``seed`` and ``stop``."""
    get = options.get
    check_number("temperature", get("temperature"), 0.0, 2.0)
    check_number("top_p", get("top_p"), 0.0, 1.0)
    check_number("frequency_penalty", get("frequency_penalty"), -2.0, 2.0)
    check_number("presence_penalty", get("presence_penalty"), -2.0, 2.0)
    check_number("request_timeout", get("request_timeout"), 0.0, math.inf, open_low=True)
    for name in ("max_tokens", "max_steps"):
        value = get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            invalid(name, f"must be an integer >= 1, got {value!r}")
    seed = get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        invalid("seed", f"must be an integer, got {seed!r}")
    stop = get("stop")
    if stop is not None and (
        isinstance(stop, str)
        or not isinstance(stop, Sequence)
        or not all(isinstance(s, str) for s in stop)
    ):
        invalid("stop", "must be a list of strings")


def _check_behaviour(options: Mapping[str, Any]) -> None:
    """The hooks, ``chain_of_thought``, ``tools`` and ``messages``."""
    get = options.get
    for name in _HOOKS:
        hook = get(name)
        if hook is not None and not callable(hook):
            invalid(name, f"must be a function, got {type(hook).__name__}")
    chain = get("chain_of_thought")
    if chain is not None and not isinstance(chain, bool | str):
        invalid("chain_of_thought", f"must be a bool or an instruction, got {chain!r}")
    if get("tools") is not None:
        tools_option(get("tools"))
    _check_messages(get("messages"))


def _check_value_types(options: Mapping[str, Any]) -> None:
    """The options that take one type: strings, the schema, model, ledger, signal, choice."""
    get = options.get
    for name in ("schema_name", "block_label", "user_id", "provider", "api_key", "base_url"):
        value = get(name)
        if value is not None and not isinstance(value, str):
            invalid(name, f"must be a string, got {type(value).__name__}")
    schema = get("response_schema")
    if schema is not None:
        structured_spec(schema, get("schema_name"))
    model = get("model")
    if model is not None and not isinstance(model, str | ChatModel):
        invalid("model", f"must be a model id or a ChatModel, got {type(model).__name__}")
    ledger = get("usage_ledger")
    if ledger is not None and not isinstance(ledger, UsageLedger):
        invalid("usage_ledger", f"must be a UsageLedger, got {type(ledger).__name__}")
    signal = get("abort_signal")
    if signal is not None and not isinstance(signal, AbortSignal | asyncio.Event):
        invalid(
            "abort_signal",
            f"must be an AbortSignal or an asyncio.Event, got {type(signal).__name__}",
        )
    choice = get("tool_choice")
    if choice is not None and (not isinstance(choice, str) or not choice.strip()):
        invalid("tool_choice", f"must be auto, none, required or a tool's name, got {choice!r}")
    params = get("custom_model_params")
    if params is not None and not isinstance(params, Mapping):
        invalid("custom_model_params", f"must be a mapping, got {type(params).__name__}")


def _check_messages(messages: object) -> None:
    if messages is None:
        return
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        invalid("messages", f"must be a list of Message, got {type(messages).__name__}")
    for position, message in enumerate(messages):
        if not isinstance(message, Message):
            invalid("messages", f"item {position} is a {type(message).__name__}, not a Message")


def check_tool_choice(choice: object, tools: Sequence[Tool]) -> None:
    """Refuse a ``tool_choice`` that is neither auto, none, required nor one of ``tools``."""
    if choice is None or choice in _NAMED_CHOICES:
        return
    if choice not in [item.name for item in tools]:
        invalid("tool_choice", f"{choice!r} is neither auto, none, required nor a tool's name")


def tools_option(value: object, option: str = "tools") -> list[Tool]:
    """The ``tools`` option as `Tool` objects: each plain function wrapped by `Tool.from_function`.

    Raises `GMIError` naming ``option`` for a value that is not a list, an item that is neither
    a `Tool` nor a function, a function that cannot be described (``*args``, say), and two tools
    of one name.
    """
    if value is None:
        return []
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        invalid(option, f"must be a list of Tool or functions, got {type(value).__name__}")
    tools: list[Tool] = []
    for position, item in enumerate(value):
        try:
            tools.append(Tool.coerce(item))
        except (TypeError, ValueError, NameError, AttributeError) as exc:
            invalid(option, f"item {position}: {exc}")
    names = [item.name for item in tools]
    if len(set(names)) != len(names):
        invalid(option, f"tool names must be unique, got {names}")
    return tools


def check_completion_settings(options: Mapping[str, Any]) -> None:
    """Refuse a bad ``thinking``, ``effort`` or ``cache``, naming it (`GMIError`)."""
    thinking = options.get("thinking")
    if thinking is not None and not isinstance(thinking, bool | int | Mapping):
        invalid("thinking", f"must be a token budget or a mapping, got {thinking!r}")
    if isinstance(thinking, int) and not isinstance(thinking, bool) and thinking < 0:
        invalid("thinking", f"must be a token budget >= 0, got {thinking!r}")
    effort = options.get("effort")
    if effort is not None and (not isinstance(effort, str) or not effort.strip()):
        invalid("effort", f"must be an effort level such as 'low' or 'high', got {effort!r}")
    cache = options.get("cache")
    if cache is not None and not isinstance(cache, bool) and cache not in ("5m", "1h"):
        invalid("cache", f"must be True, False, '5m' or '1h', got {cache!r}")


def cache_diagnostics_request(value: object) -> CacheDiagnosticsRequest | None:
    """The first step's diagnostics request: ``True`` opts in, a string names the response."""
    if value is None or value is False:
        return None
    if value is True:
        return CacheDiagnosticsRequest()
    if isinstance(value, str) and value.strip():
        return CacheDiagnosticsRequest(value)
    if isinstance(value, str):
        invalid("cache_diagnostics", "the previous message id is empty")
    invalid(
        "cache_diagnostics", f"must be True or a previous message id, got {type(value).__name__}"
    )


def check_number(
    option: str, value: object, low: float, high: float, *, open_low: bool = False
) -> None:
    """Refuse a value that is not a number from ``low`` to ``high`` (``None`` passes).

    With ``open_low``, ``low`` itself is refused.
    """
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        invalid(option, f"must be a number, got {value!r}")
    if value < low or value > high or (open_low and value == low):
        bound = f"> {low}" if open_low else f"between {low} and {high}"
        invalid(option, f"must be {bound}, got {value!r}")
