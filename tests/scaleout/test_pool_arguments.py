"""Every bad argument of ``spawn_pool`` is refused at the call, with a
TypeError (wrong type) or ValueError (wrong value) naming the argument;
nothing bad reaches a node or the coordinator's tasks."""

from __future__ import annotations

import pytest

from actors import ActorSystem
from actors.nats import NatsServer
from actors.remote import FrameTooLarge

from ._workers import Echo
from .conftest import remote

pytestmark = pytest.mark.anyio


async def test_a_process_count_that_is_not_an_int_is_a_type_error(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        for bad in (True, 1.5, "2"):
            with pytest.raises(TypeError, match="processes"):
                main.remote.spawn_pool(Echo, processes=bad)
        for bad in (0, -1):
            with pytest.raises(ValueError, match="processes"):
                main.remote.spawn_pool(Echo, processes=bad)


async def test_bad_node_lists_are_refused_at_the_call(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        spawn = main.remote.spawn_pool
        with pytest.raises(ValueError, match="nodes"):
            spawn(Echo, nodes=[])
        with pytest.raises(TypeError, match="node"):
            spawn(Echo, nodes=[1])
        with pytest.raises(ValueError, match="node"):
            spawn(Echo, nodes=["a b"])
        with pytest.raises(ValueError, match=r"nodes.*'a'"):
            spawn(Echo, nodes=["a", "b", "a"])


async def test_workers_and_prefetch_beyond_what_a_node_takes_are_refused_at_the_call(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        with pytest.raises(ValueError, match="workers"):
            main.remote.spawn_pool(Echo, nodes=["a"], workers=4097)
        with pytest.raises(ValueError, match="prefetch"):
            main.remote.spawn_pool(Echo, nodes=["a"], prefetch=65537)


async def test_worker_arguments_too_large_for_a_message_are_refused_at_the_call(
    nats_server: NatsServer, system_name: str
) -> None:
    async with ActorSystem(remote=remote(nats_server.url, system_name, "main")) as main:
        with pytest.raises(FrameTooLarge, match="arguments"):
            main.remote.spawn_pool(Echo, b"x" * 2_000_000, nodes=["a"])
        with pytest.raises(FrameTooLarge, match="arguments"):
            main.remote.spawn_pool(Echo, nodes=["a"], big=b"x" * 2_000_000)
