"""Learners of one GMI: `LearningLayer.gmi_session` applies the spec's "Learners" rules.

Each test names the sentence of spec "Learning" / Learners it pins.
"""

from __future__ import annotations

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.learning import (
    MANIFEST_LOG_PREFIX,
    LearnerContext,
    LearnerKey,
    LearnerSession,
    LearningLayer,
    create_learning_layer,
    render_section,
)
from agentos.substrate.learning_seam import PreparedTurn, TurnPreparation

CONTEXT = LearnerContext("lesson-1", "tutor", {"openness": 0.9, "conscientiousness": 0.95})
SECTION = render_section(CONTEXT.authored_traits)


def turn(
    n: int,
    user: str | None = "student-7f3a",
    namespace: str = "",
    *,
    workflow_id: str | None = None,
    continuation: bool = False,
    seat: bool = False,
) -> TurnPreparation:
    return TurnPreparation(
        f"turn-{n}",
        user,
        namespace,
        f"message {n}",
        workflow_id=workflow_id,
        continuation=continuation,
        workflow_seat=seat,
    )


def layer_of(config: object = None, lines: list[str] | None = None) -> LearningLayer:
    return create_learning_layer(
        config,  # type: ignore[arg-type]
        environ={},
        log=(lines.append if lines is not None else lambda _: None),
    )


async def outcomes(
    layer: LearningLayer, turns: list[TurnPreparation], **kwargs: object
) -> list[tuple[str, str | None]]:
    session = layer.gmi_session(CONTEXT, **kwargs)  # type: ignore[arg-type]
    answers: list[tuple[str, str | None]] = []
    for item in turns:
        prepared = await session.prepare_turn(item)
        assert prepared is not None
        assert prepared.system_prompts == (SECTION,)
        answers.append((prepared.learner, prepared.no_learner_reason))
    return answers


BOUND = ("bound", None)


async def test_the_first_turn_binds_the_user_and_every_turn_sends_the_section() -> None:
    lines: list[str] = []
    layer = layer_of(lines=lines)
    assert await outcomes(layer, [turn(1), turn(2)], agent_key="tutor") == [BOUND, BOUND]
    assert (await layer.manifest()).turns == {"prepared": 2, "bound": 2, "none": {}}
    assert len(lines) == 1
    assert lines[0].startswith(MANIFEST_LOG_PREFIX)


@pytest.mark.parametrize(
    "user", ["", "  ", "anonymous_user", "anonymous", "system", "guest", "kiosk"]
)
async def test_an_anonymous_user_has_no_learner_on_any_turn(user: str) -> None:
    """ "A session has no learner when its user id is blank, anonymous_user, anonymous, system,
    guest or one of learning.anonymousUserIds"."""
    lines: list[str] = []
    layer = layer_of({"anonymous_user_ids": ["kiosk"]}, lines)
    got = await outcomes(layer, [turn(1, user), turn(2, user)], agent_key="tutor")
    assert got == [("none", "anonymous_user")] * 2
    assert lines == []


async def test_a_session_without_a_user_or_an_agent_has_no_learner() -> None:
    layer = layer_of()
    assert await outcomes(layer, [turn(1, None)], agent_key="tutor") == [("none", "no_user")]
    assert await outcomes(layer, [turn(1)], agent_key=None) == [("none", "no_agent")]


async def test_the_settings_agent_key_and_namespace_are_the_defaults() -> None:
    layer = layer_of({"agent_key": "tutor", "namespace": "school"})
    session = layer.gmi_session(CONTEXT, agent_key=None)
    assert await session.prepare_turn(turn(1)) is not None
    learner = session.learner_session
    assert learner is not None
    assert learner.key == LearnerKey("school", "tutor", "student-7f3a")


async def test_another_user_ends_the_learner_for_that_and_every_later_turn() -> None:
    """ "a turn of another user [...] has no learner, and neither has any later turn"."""
    got = await outcomes(
        layer_of(), [turn(1), turn(2, "mallory"), turn(3), turn(4)], agent_key="tutor"
    )
    assert got == [BOUND] + [("none", "another_user")] * 3


async def test_the_same_user_in_another_organization_ends_the_learner() -> None:
    layer = layer_of()
    got = await outcomes(
        layer,
        [turn(1, namespace="acme"), turn(2, namespace="globex"), turn(3, namespace="acme")],
        agent_key="tutor",
    )
    assert got == [BOUND] + [("none", "another_namespace")] * 2
    turns = (await layer.manifest()).turns
    assert turns == {"prepared": 3, "bound": 1, "none": {"another_namespace": 2}}


async def test_the_first_turn_of_a_resumed_gmi_binds_its_organization() -> None:
    """ "a GMI built again to resume a stored turn is bound at the first turn it prepares, under
    that turn's organization"."""
    got = await outcomes(
        layer_of(),
        [turn(1, namespace="globex", continuation=True), turn(2, namespace="globex")],
        agent_key="tutor",
    )
    assert got == [BOUND, BOUND]


async def test_a_session_opened_under_a_namespace_owns_turns_that_name_none() -> None:
    got = await outcomes(
        layer_of(),
        [turn(1), turn(2, namespace="school"), turn(3, namespace="acme")],
        agent_key="tutor",
        namespace="school",
    )
    assert got == [BOUND, BOUND, ("none", "another_namespace")]


async def test_a_workflow_turn_of_the_own_user_leaves_the_next_turn_its_learner() -> None:
    """ "A turn that carries metadata.workflowId has none: one of the session's own user leaves
    the next turn its learner"."""
    layer = layer_of()
    got = await outcomes(layer, [turn(1), turn(2, workflow_id="wf-1"), turn(3)], agent_key="tutor")
    assert got == [BOUND, ("none", "workflow_turn"), BOUND]
    turns = (await layer.manifest()).turns
    assert turns == {"prepared": 3, "bound": 2, "none": {"workflow_turn": 1}}


@pytest.mark.parametrize(
    "other", [turn(2, "mallory", workflow_id="wf-1"), turn(2, namespace="acme", workflow_id="wf")]
)
async def test_a_workflow_turn_of_another_user_or_org_ends_the_learner(
    other: TurnPreparation,
) -> None:
    got = await outcomes(layer_of(), [turn(1), other, turn(3)], agent_key="tutor")
    assert got[0] == BOUND
    assert got[1] == got[2]
    assert got[1][1] in {"another_user", "another_namespace"}


async def test_a_workflow_seat_has_no_learner() -> None:
    """ "a workflow seat's GMI has none"; its overlay renders for its session only."""
    layer = layer_of()
    seat = LearnerContext("seat-1", "tutor", {"extraversion": 0.5}, {"extraversion": 0.1})
    session = layer.gmi_session(seat, agent_key="tutor", seat=True)
    prepared = await session.prepare_turn(turn(1))
    assert prepared is not None
    assert (prepared.learner, prepared.no_learner_reason) == ("none", "workflow_seat")
    assert prepared.system_prompts == (render_section({"extraversion": 0.1}),)
    got = await outcomes(layer, [turn(1, seat=True), turn(2)], agent_key="tutor")
    assert got == [("none", "workflow_seat"), BOUND]


async def test_a_continuation_belongs_to_the_turn_it_continues() -> None:
    """ "A tool continuation belongs to the turn it continues; one that runs under another
    organization than its turn [...] is a turn of another namespace"."""
    layer = layer_of()
    session = layer.gmi_session(CONTEXT, agent_key="tutor")
    first = await session.prepare_turn(turn(1, workflow_id="wf-1"))
    again = await session.prepare_turn(turn(1, continuation=True))
    assert again is first
    moved = await session.prepare_turn(turn(1, namespace="globex", continuation=True))
    assert moved is not None
    assert (moved.learner, moved.no_learner_reason) == ("none", "another_namespace")
    later = await session.prepare_turn(turn(2))
    assert later is not None
    assert later.no_learner_reason == "another_namespace"
    turns = (await layer.manifest()).turns
    assert turns["prepared"] == 3


class FlakyLayer(LearningLayer):
    """A layer whose first ``failures`` openings fail."""

    failures = 2

    async def for_learner(self, key: LearnerKey | None, context: LearnerContext) -> LearnerSession:
        if self.failures:
            self.failures -= 1
            raise GMIError("store unavailable", GMIErrorCode.SERVICE_UNAVAILABLE)
        return await super().for_learner(key, context)


async def test_a_layer_that_fails_to_open_a_learner_asks_again_at_each_turn() -> None:
    """ "the session asks again at each turn, and until one opens each turn runs that way"."""
    base = layer_of()
    layer = FlakyLayer(
        base.settings,
        surface="custom",
        profile="custom",
        host_loops=None,
        environ={},
        log=lambda _: None,
    )
    session = layer.gmi_session(CONTEXT, agent_key="tutor")
    answers: list[PreparedTurn | None] = [
        await session.prepare_turn(turn(1)),
        await session.prepare_turn(turn(2, "mallory")),
        await session.prepare_turn(turn(3)),
    ]
    assert answers[:2] == [None, None]
    assert answers[2] is not None
    assert (answers[2].learner, answers[2].no_learner_reason) == ("bound", None)
    turns = (await layer.manifest()).turns
    assert turns == {"prepared": 3, "bound": 1, "none": {"learner_unavailable": 2}}


async def test_a_closed_layer_never_raises_from_a_gmi_session() -> None:
    layer = layer_of()
    session = layer.gmi_session(CONTEXT, agent_key="tutor")
    await layer.close()
    assert await session.prepare_turn(turn(1)) is None


async def test_end_session_ends_the_learner() -> None:
    layer = layer_of()
    session = layer.gmi_session(CONTEXT, agent_key="tutor")
    assert await session.prepare_turn(turn(1)) is not None
    await session.end_session()
    await session.end_session()
    after = await session.prepare_turn(turn(2))
    assert after is not None
    assert (after.learner, after.no_learner_reason) == ("none", "session_ended")


async def test_gmi_session_checks_its_context() -> None:
    with pytest.raises(GMIError) as error:
        layer_of().gmi_session({"session_id": "s"}, agent_key="x")  # type: ignore[arg-type]
    assert error.value.details == {"option": "context"}
