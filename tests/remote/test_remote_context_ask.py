"""context.ask and context.run with a remote ref as the target, a pool
reached from another node, and what ref.statistics() says of a remote ref."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio
import msgspec
import pytest

from actors import Actor, ActorRef, AskTimeout, Result
from actors.nats import NatsServer
from actors.remote import RemoteRef

from . import _nodes

pytestmark = pytest.mark.anyio


class Question(msgspec.Struct):
    n: int


class Slow(msgspec.Struct):
    """Never answered in time."""


TYPES = [(Question, "q.Question"), (Slow, "q.Slow")]


class Answerer(Actor):
    def __init__(self, gate: anyio.Event | None = None) -> None:
        self.gate = gate

    async def receive(self, message: Any) -> Any:
        if isinstance(message, Slow):
            assert self.gate is not None
            await self.gate.wait()
            return None
        if isinstance(message, Question):
            return message.n * 2
        return message


two_nodes = partial(_nodes.two_nodes, types=TYPES)


class Journal(Actor):
    def __init__(self, log: list[Any], done: anyio.Event) -> None:
        self.log = log
        self.done = done

    def receive(self, message: Any) -> Any:
        if isinstance(message, tuple) and message[0] == "ask":
            _, target, request, timeout = message
            self.context.ask(target, request, timeout, then=lambda r: ("answer", r))
            return None
        self.log.append(message)
        if isinstance(message, tuple):
            self.done.set()
        return message


async def test_context_ask_of_a_remote_ref_comes_back_as_a_message(
    nats_server: NatsServer,
) -> None:
    log: list[Any] = []
    done = anyio.Event()
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Answerer, name="answerer")
        target = await a.remote.lookup("b", "/user/answerer")
        assert isinstance(target, RemoteRef)
        asker = a.spawn(Journal, log, done)
        asker.tell(("ask", target, Question(21), 5.0))
        assert await asker.ask("meanwhile") == "meanwhile"
        await done.wait()
    assert log[-1] == ("answer", Result(42))


async def test_a_remote_ask_timeout_comes_back_as_a_failed_result(
    nats_server: NatsServer,
) -> None:
    log: list[Any] = []
    done = anyio.Event()
    gate = anyio.Event()
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Answerer, gate, name="answerer")
        target = await a.remote.lookup("b", "/user/answerer")
        asker = a.spawn(Journal, log, done)
        asker.tell(("ask", target, Slow(), 0.05))
        await done.wait()
        gate.set()
    ((_, result),) = log
    assert isinstance(result.error, AskTimeout)


async def test_a_pool_is_reached_from_another_node_by_its_path(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn_pool(Answerer, 2, name="answerers")
        target = await a.remote.lookup("b", "/user/answerers")
        assert await target.ask(Question(5)) == 10


async def test_statistics_of_a_remote_ref_is_a_clear_type_error(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        b.spawn(Answerer, name="answerer")
        target: ActorRef[Any] = await a.remote.lookup("b", "/user/answerer")
        with pytest.raises(TypeError, match="another node"):
            target.statistics()
