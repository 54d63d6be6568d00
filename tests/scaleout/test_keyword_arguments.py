"""Keyword arguments of a remote spawn and of a pool's workers reach the
constructor on the node (they travel beside the positional ones)."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from actors.nats import NatsServer

from ._workers import Echo
from .conftest import node, remote

pytestmark = pytest.mark.anyio


async def test_keyword_arguments_reach_a_remotely_spawned_actor(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        ref = await main.remote.spawn("a", Echo, 1, word="w", k=None)
        assert await ref.ask("args") == [[1], {"word": "w", "k": None}]


async def test_keyword_arguments_reach_every_worker_of_a_pool(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
        node(url, system_name, "b"),
    ):
        pool = main.remote.spawn_pool(Echo, 7, nodes=["a", "b"], workers=2, k="v")
        await pool.wait_ready(timeout=10)
        for _ in range(8):
            assert await pool.ask("args", timeout=10) == [[7], {"k": "v"}]
