"""A turn loop of your own over the learning layer (spec "Learning": A turn loop of your own).

A product that runs its own turn loop over its own memory manager calls the layer itself: it
opens one learner session per learner, prepares each user turn (the personality section to send
at priority 2, whether the turn has a learner, the mode in effect) and ends the session. Offline:
no model is called.

    python examples/learning_turn_loop.py
"""

from __future__ import annotations

import asyncio

from agentos.learning import (
    LearnerContext,
    LearnerKey,
    PreparedTurn,
    TurnPreparation,
    create_learning_layer,
)


async def main() -> PreparedTurn:
    """Prepare one turn for ``user-42`` of ``support-bot`` in ``acme`` and print it."""
    layer = create_learning_layer({"agent_key": "support-bot"})
    learner = await layer.for_learner(
        LearnerKey(namespace="acme", agent_key="support-bot", user_id="user-42"),
        LearnerContext(
            session_id="session-1",
            persona_id="support-bot",
            authored_traits={"honesty": 0.9, "extraversion": 0.8},
        ),
    )
    turn = await learner.prepare_turn(
        TurnPreparation(
            turn_id="turn-1",
            user_id="user-42",
            namespace="acme",
            text="Where is my order?",
            model_ids=("gpt-4o",),
            workflow_seat=False,
        )
    )
    # turn.system_prompts: the personality section at priority 2; learner 'bound'; mode 'on'
    for prompt in turn.system_prompts:
        print(f"system prompt (priority {prompt.priority}):\n{prompt.content}")
    print(f"learner: {turn.learner}, mode: {turn.mode}")

    await learner.end_session()
    await layer.close()
    return turn


if __name__ == "__main__":
    asyncio.run(main())
