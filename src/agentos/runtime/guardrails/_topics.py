"""`BlockedTopics`: refuse input or output that names a blocked topic (issue 13 item 6).

Each topic is given by keywords or phrases. A phrase matches case-insensitively as whole words:
not inside a longer word (``"gun"`` does not match ``"begun"``), its words separated by any
whitespace in the text (``"build a bomb"`` matches ``"Build  a bomb"``, and the phrase split
over two lines). A match blocks with the reason
``blocked topic 'weapons' (matched 'build a bomb')``.

Streaming: ``output_tail`` holds back as many trailing tokens as the longest phrase has words,
so a phrase split across deltas is checked whole; a phrase straddling that cut moves the cut to
the start of the token where the phrase starts.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from agentos.api.call_checks import invalid

from ._decision import Allow, Block, GuardrailDecision, GuardrailStage
from ._options import check_id, check_stages, map_strings, token_spans
from ._protocol import OutputBatch

__all__ = ["BlockedTopics"]


class BlockedTopics:
    """Blocks the input, the output or tool calls that touch a configured topic.

    ``topics`` maps each topic to its keywords or phrases; a plain list makes each phrase its own
    topic. ``stages`` is where it applies (input and output by default; add ``"tool_call"`` to
    check the strings inside tool arguments too). Options are checked here: `GMIError` naming
    the option.
    """

    def __init__(
        self,
        topics: Mapping[str, Sequence[str]] | Sequence[str],
        *,
        stages: Collection[GuardrailStage | str] = (GuardrailStage.INPUT, GuardrailStage.OUTPUT),
        id: str = "blocked_topics",
    ) -> None:
        self._id = check_id(id)
        self._stages = check_stages(stages, GuardrailStage)
        self._phrases = _check_topics(topics)
        self._pattern = re.compile(
            "|".join(f"(?P<p{index}>{regex})" for index, (_, _, regex) in enumerate(self._phrases)),
            re.IGNORECASE,
        )
        self._words = max(len(phrase.split()) for _, phrase, _ in self._phrases)

    @property
    def id(self) -> str:
        """The guardrail's id (``blocked_topics`` unless given)."""
        return self._id

    @property
    def topics(self) -> tuple[str, ...]:
        """The topics, in the order given."""
        return tuple(dict.fromkeys(topic for topic, _, _ in self._phrases))

    async def check_input(self, text: str) -> GuardrailDecision:
        """Block an input that touches a topic."""
        return self._check([text], GuardrailStage.INPUT)

    async def check_output(self, batch: OutputBatch) -> GuardrailDecision:
        """Block the output stream at a batch that touches a topic."""
        return self._check([batch.text], GuardrailStage.OUTPUT)

    async def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> GuardrailDecision:
        """Block a tool call whose arguments hold a string that touches a topic."""
        return self._check(_strings(arguments), GuardrailStage.TOOL_CALL)

    def output_tail(self, pending: str) -> int:
        """The trailing tokens a phrase could still span (see the module doc)."""
        if GuardrailStage.OUTPUT not in self._stages or not pending:
            return 0
        spans = token_spans(pending)
        cut = spans[-self._words][0] if len(spans) >= self._words else 0
        matches = [match.span() for match in self._pattern.finditer(pending)]
        while straddling := [start for start, end in matches if start < cut < end]:
            cut = max(s for s, _ in spans if s <= straddling[0])  # that phrase's token
        return len(pending) - cut

    def _check(self, texts: Iterable[str], stage: GuardrailStage) -> GuardrailDecision:
        if stage not in self._stages:
            return Allow()
        for text in texts:
            match = self._pattern.search(text)
            if match is not None and match.lastgroup is not None:
                topic, phrase, _ = self._phrases[int(match.lastgroup[1:])]
                return Block(f"blocked topic {topic!r} (matched {phrase!r})")
        return Allow()


def _check_topics(topics: object) -> list[tuple[str, str, str]]:
    """``(topic, phrase, regex)`` for every phrase, in order; `GMIError` naming ``topics``."""
    if isinstance(topics, Mapping):
        pairs = list(topics.items())
    elif isinstance(topics, Sequence) and not isinstance(topics, str):
        pairs = [(phrase, [phrase]) for phrase in topics]
    else:
        invalid("topics", f"must be a map of topic to phrases or a list of phrases, not {topics!r}")
    if not pairs:
        invalid("topics", "name at least one topic")
    phrases: list[tuple[str, str, str]] = []
    for topic, listed in pairs:
        if not isinstance(topic, str) or not topic.strip():
            invalid("topics", f"a topic must be a non-blank string, not {topic!r}")
        if isinstance(listed, str) or not isinstance(listed, Sequence) or not listed:
            invalid("topics", f"topic {topic!r} needs a non-empty list of phrases")
        for phrase in listed:
            if not isinstance(phrase, str) or not phrase.strip():
                invalid("topics", f"topic {topic!r} has a blank or non-string phrase {phrase!r}")
            words = r"\s+".join(re.escape(word) for word in phrase.split())
            phrases.append((topic, " ".join(phrase.split()), rf"(?<!\w){words}(?!\w)"))
    return phrases


def _strings(arguments: Mapping[str, Any]) -> list[str]:
    """Every string inside a tool call's arguments (nested maps and lists included)."""
    found: list[str] = []

    def keep(text: str) -> str:
        found.append(text)
        return text

    map_strings(arguments, keep)
    return found
