"""A pool across processes is an ActorRef: it compares and hashes as one,
answers ``statistics()`` about its queue, and an actor that watches it gets
``Terminated(pool, reason)`` when the pool stops (its coordinator, a local
actor, terminates)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, ActorSystem, RefStatistics, StopReason, Terminated
from actors.nats import NatsServer
from actors.remote import RemotePoolRef

from ._workers import Echo
from .conftest import node, remote

pytestmark = pytest.mark.anyio


class PoolWatcher(Actor):
    def __init__(self, seen: list[Terminated], got: anyio.Event) -> None:
        self.seen = seen
        self.got = got

    def receive(self, message: Any) -> Any:
        if isinstance(message, Terminated):
            self.seen.append(message)
            self.got.set()
            return None
        self.context.watch(message)
        return "watching"


async def test_a_pool_is_an_actor_ref_and_its_watchers_learn_when_it_stops(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a"),
    ):
        pool = main.remote.spawn_pool(Echo, nodes=["a"], capacity=8)
        assert isinstance(pool, ActorRef) and isinstance(pool, RemotePoolRef)
        assert pool == pool and len({pool, pool}) == 1
        assert pool.statistics() == RefStatistics(0, 0, 8, 0)
        await pool.wait_ready(timeout=10)
        assert await pool.ask(1, timeout=10) == 1
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = main.spawn(PoolWatcher, seen, got)
        assert await watcher.ask(pool) == "watching"
        pool.stop()
        with anyio.fail_after(10):
            await got.wait()
        [terminated] = seen
        assert terminated.ref is pool
        assert terminated.reason is StopReason.NORMAL
        assert not pool.is_alive


async def test_watching_a_stopped_pool_delivers_terminated_at_once(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        pool = main.remote.spawn_pool(Echo, nodes=["nobody"])
        pool.stop()
        await pool.join()
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = main.spawn(PoolWatcher, seen, got)
        assert await watcher.ask(pool) == "watching"
        with anyio.fail_after(10):
            await got.wait()
        assert [t.ref for t in seen] == [pool]
