"""Remote spawn between two nodes of one process: the class by path, its
arguments through the codec, supervision on the node, watch from the
spawner, and clear errors for what a node does not host."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, StopReason, Terminated
from actors.nats import NatsServer
from actors.remote import ActorNotFound, RemoteRef, SpawnError

from ._workers import Echo, Point
from .conftest import WORKERS, node, remote

pytestmark = pytest.mark.anyio


async def test_a_remote_spawn_returns_a_ref_to_the_actor_on_that_node(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node(url, system_name, "worker") as worker,
    ):
        ref = await spawner.remote.spawn(
            "worker", Echo, 1, "two", Point(3, 4), name="echo", capacity=8, k=None
        )
        assert isinstance(ref, RemoteRef)
        assert ref.node == worker.remote.node
        assert ref.path == "/user/node-agent/echo"
        args, kwargs = await ref.ask("args")
        assert args[:2] == [1, "two"]
        assert kwargs == {"k": None}
        # The Point arrived as a Point (its module's types are registered on
        # both sides): the actor swaps it back.
        assert await ref.ask(Point(1, 2)) == Point(2, 1)


async def test_a_class_path_string_spawns_the_same_class(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node(url, system_name, "worker"),
    ):
        ref = await spawner.remote.spawn("worker", f"{WORKERS}:Echo", "a")
        assert await ref.ask("args") == [["a"], {}]


@pytest.mark.parametrize(
    "target",
    [
        "os:system",  # a module the node was not started with
        f"{WORKERS}:NotAnActor",  # not an Actor subclass
        f"{WORKERS}:_Private",  # not a public name
        f"{WORKERS}:Missing",
        f"{WORKERS}:Echo.receive",
    ],
)
async def test_a_class_the_node_does_not_host_is_refused_with_spawn_error(
    nats_server: NatsServer, system_name: str, target: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node(url, system_name, "worker") as worker,
    ):
        with pytest.raises(SpawnError):
            await spawner.remote.spawn("worker", target)
        # The agent answered; it did not fail (no restart, nothing logged).
        assert worker.failures == 0


async def test_a_malformed_class_path_is_a_value_error_at_the_spawner(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(
        remote=remote(nats_server.url, system_name, "spawner")
    ) as spawner:
        with pytest.raises(ValueError, match="module:ClassName"):
            await spawner.remote.spawn("worker", "no-colon")
        with pytest.raises(TypeError, match="Actor subclass"):
            await spawner.remote.spawn("worker", dict)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="capacity"):
            await spawner.remote.spawn("worker", Echo, capacity="8")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="restart"):
            await spawner.remote.spawn("worker", Echo, restart="sometimes")


async def test_an_argument_the_codec_cannot_encode_is_a_type_error_at_the_spawner(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node(url, system_name, "worker"),
    ):
        with pytest.raises(TypeError, match="object"):
            await spawner.remote.spawn("worker", Echo, object())


async def test_a_taken_name_is_a_value_error_from_the_node(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node(url, system_name, "worker"),
    ):
        await spawner.remote.spawn("worker", Echo, name="once")
        with pytest.raises(ValueError, match="once"):
            await spawner.remote.spawn("worker", Echo, name="once")


async def test_a_node_without_an_agent_is_actor_not_found(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        ActorSystem(remote=remote(url, system_name, "plain")),
    ):
        with pytest.raises(ActorNotFound, match="node agent"):
            await spawner.remote.spawn("plain", Echo)


class Watcher(Actor):
    """Watches the ref it is asked; records the Terminated."""

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


async def test_a_remotely_spawned_actor_is_supervised_on_its_node_and_watched(
    nats_server: NatsServer, system_name: str
) -> None:
    url = nats_server.url
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node(url, system_name, "worker") as worker,
    ):
        ref = await spawner.remote.spawn("worker", Echo, "state")
        seen: list[Terminated] = []
        got = anyio.Event()
        watcher = spawner.spawn(Watcher, seen, got)
        assert await watcher.ask(ref) == "watching"
        # Its handler fails: the node's agent restarts it, same ref.
        with pytest.raises(ValueError, match="asked to fail"):
            await ref.ask("fail")
        assert await ref.ask("args") == [["state"], {}]
        assert worker.restarts == 1
        assert not seen
        ref.stop()
        with anyio.fail_after(10):
            await got.wait()
        [terminated] = seen
        assert terminated.ref == ref
        assert terminated.reason == StopReason.NORMAL
