"""ClientPool: one SDK client per event loop and settings, closed when its last user leaves."""

from __future__ import annotations

import asyncio

from agentos.llm.providers._client_pool import ClientPool


class FakeClient:
    def __init__(self) -> None:
        self.closed = False


async def close(client: FakeClient) -> None:
    client.closed = True


async def test_models_with_the_same_settings_share_one_client_per_loop() -> None:
    pool: ClientPool[FakeClient] = ClientPool(close)
    first, second = object(), object()
    a = await pool.get(("k", None), first, FakeClient)
    b = await pool.get(("k", None), second, FakeClient)
    c = await pool.get(("other", None), first, FakeClient)
    assert a is b
    assert c is not a


async def test_the_client_closes_when_its_last_user_releases_it() -> None:
    pool: ClientPool[FakeClient] = ClientPool(close)
    first, second = object(), object()
    client = await pool.get("k", first, FakeClient)
    await pool.get("k", second, FakeClient)
    await pool.release("k", first)
    assert not client.closed
    await pool.release("k", second)
    assert client.closed
    assert await pool.get("k", first, FakeClient) is not client


def test_a_finished_loops_clients_are_closed_when_another_loop_asks() -> None:
    pool: ClientPool[FakeClient] = ClientPool(close)
    user = object()
    old = asyncio.run(pool.get("k", user, FakeClient))
    new = asyncio.run(pool.get("k", user, FakeClient))
    assert new is not old
    assert old.closed
    assert not new.closed
