"""The context-window check of the path without a GMI: refuse what cannot fit before sending it.

Spec (the first table, "Per-session state" of the lightweight helpers): a plain `agent()`
session sends its whole history with every turn, so a request that does not fit the window of
a model the catalog knows is refused with `ContextWindowExceededError` before it is sent.
"""

from __future__ import annotations

from agentos.core.errors import ContextWindowExceededError
from agentos.core.messages import ContentPart, Message
from agentos.llm import catalog
from agentos.llm.model import ModelRequest
from agentos.llm.resolve import resolve_model
from agentos.llm.token_estimate import estimate_prompt_tokens

from .call_checks import tools_option
from .generate import DEFAULT_COT_INSTRUCTION, TextOptions

__all__ = ["check_context_window"]


def check_context_window(prompt: str | list[ContentPart], options: TextOptions) -> None:
    """Refuse a request that does not fit the primary model's window, before it is sent.

    The request is what `stream_text()` would send first: the system prompt (with the reasoning
    instruction when tools are offered), ``messages`` and the prompt, and the tool definitions
    (none on a structured call), estimated at characters / 4. Only a model the catalog knows
    is checked (an unknown model's window is a guess), and only the primary: a provider that
    cannot be set up is left for `stream_text()` to report. Raises `ContextWindowExceededError`
    (``GMI_CONTEXT_ERROR``; ``details`` holds ``provider``, ``model``, ``context_window`` and
    ``required_tokens``).
    """
    ids = _primary_ids(options)
    if ids is None:
        return
    provider_id, model_id = ids
    info = catalog.model_info(provider_id, model_id)
    if info is None:
        return
    tools = tools_option(options.get("tools"))
    structured = options.get("response_schema") is not None
    system = options.get("system") or ""
    chain = options.get("chain_of_thought", False)
    if tools and chain:
        instruction = chain if isinstance(chain, str) else DEFAULT_COT_INSTRUCTION
        system = f"{instruction}\n\n{system}"
    messages = [Message.system(system)] if system.strip() else []
    messages.extend(options.get("messages") or ())
    messages.append(Message.user(prompt))
    definitions = [] if structured else [tool.definition() for tool in tools]
    required = estimate_prompt_tokens(ModelRequest(messages, definitions))
    if required > info.context_window:
        raise ContextWindowExceededError(
            f"the request needs about {required} tokens with the whole session history, more "
            f"than the {info.context_window}-token context window of {provider_id}:{model_id}; "
            "clear() or reseed() the session, or lower history.max_tokens",
            {
                "provider": provider_id,
                "model": model_id,
                "context_window": info.context_window,
                "required_tokens": required,
            },
            component="agent",
        )


def _primary_ids(options: TextOptions) -> tuple[str, str] | None:
    model = options.get("model")
    if model is not None and not isinstance(model, str):
        return model.provider_id, model.model_id
    try:
        # Resolving builds an adapter but sends nothing; the gateway resolves it again per call.
        resolved = resolve_model(
            options.get("provider"),
            model,
            api_key=options.get("api_key"),
            base_url=options.get("base_url"),
        )
    except Exception:  # a provider that cannot be set up: stream_text() reports it
        return None
    return resolved.provider_id, resolved.model_id
