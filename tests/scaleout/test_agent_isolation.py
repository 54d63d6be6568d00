"""A node's agent hosts actors for many spawners: one spawned class that
fails (in its constructor, or again and again once started) must not take
the node's other actors down with it."""

from __future__ import annotations

import anyio
import pytest

from actors import ActorSystem, AskTimeout
from actors.nats import NatsServer

from . import _hostile
from ._hostile import FailsToConstruct, FailsToStart, Survivor
from .conftest import node, remote

pytestmark = pytest.mark.anyio

HOSTILE = (_hostile.__name__,)


async def test_a_failing_constructor_fails_the_spawn_and_spares_the_nodes_actors(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", HOSTILE) as a,
    ):
        survivor = await main.remote.spawn("a", Survivor, name="survivor")
        agent = a.lookup("/user/node-agent")
        with pytest.raises(Exception, match="cannot construct with") as caught:
            await main.remote.spawn("a", FailsToConstruct, 1)
        assert "RuntimeError" in f"{type(caught.value).__name__} {caught.value}"
        assert await survivor.ask("still here") == "still here"
        assert a.lookup("/user/node-agent") is agent


async def test_an_actor_that_keeps_failing_does_not_stop_the_nodes_other_actors(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    # More restarts than a default strategy allows within its period.
    restarted = anyio.Event()
    _hostile.STARTS.update(count=0, wanted=8, event=restarted)
    try:
        async with (
            ActorSystem(remote=remote(url, system_name, "main")) as main,
            node(url, system_name, "a", HOSTILE),
        ):
            survivor = await main.remote.spawn("a", Survivor, name="survivor")
            await main.remote.spawn("a", FailsToStart, name="crasher")
            with anyio.fail_after(10):
                await restarted.wait()
            assert await survivor.ask("still here") == "still here"
    finally:
        _hostile.STARTS.update(count=0, wanted=0, event=None)


async def test_a_pool_whose_workers_fail_to_construct_makes_wait_ready_raise_why(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", HOSTILE),
    ):
        pool = main.remote.spawn_pool(FailsToConstruct, nodes=["a"], workers=2)
        with pytest.raises(Exception, match="cannot construct with"):
            await pool.wait_ready(timeout=10)
        with pytest.raises(AskTimeout, match=r"node a refused: .*cannot construct"):
            await pool.ask(1, timeout=0.2)
        pool.stop()
        await pool.join()


async def test_a_pool_whose_workers_cannot_start_backs_off_and_its_ask_says_why(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    _hostile.STARTS.update(count=0, wanted=0, event=None)
    async with (
        ActorSystem(remote=remote(url, system_name, "main")) as main,
        node(url, system_name, "a", HOSTILE),
    ):
        pool = main.remote.spawn_pool(FailsToStart, nodes=["a"])
        with anyio.fail_after(20):
            while True:
                try:
                    await pool.ask(1, timeout=1)
                except AskTimeout as exc:
                    # A job that waits for a member times out, saying why.
                    if "ended soon after joining" in str(exc):
                        message = str(exc)
                        break
                except Exception:
                    pass  # it reached a worker and failed with it
                else:
                    pytest.fail("a worker that cannot start answered")
        assert "cannot start" in message
        pool.stop()
        await pool.join()
    # Members joined again with a growing delay, not in a tight loop (which
    # made hundreds of members, thousands of failures, in those 2 s).
    assert _hostile.STARTS["count"] < 100
