"""A remote ask fails as a local one would: ``ActorStopped`` for an actor
that has stopped, ``FrameTooLarge`` itself (registered with every node's
codec) for a reply that does not fit the server's ``max_payload``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from actors import Actor, ActorStopped
from actors.nats import NatsServer
from actors.remote import FrameTooLarge, RemoteActorError

from ._nodes import two_nodes

pytestmark = pytest.mark.anyio


class Big(Actor):
    def receive(self, message: Any) -> Any:
        return b"x" * message


async def test_a_remote_ask_of_a_stopped_actor_raises_actor_stopped(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        actor = b.spawn(Big, name="big")
        ref = await a.remote.lookup("b", "/user/big")
        assert await ref.ask(3, timeout=10) == b"xxx"
        actor.stop()
        with anyio.fail_after(10):
            await actor.join()
        with pytest.raises(ActorStopped) as remote_error:
            await ref.ask(3, timeout=10)
        with pytest.raises(ActorStopped):
            await actor.ask(3, timeout=10)
        assert "/user/big" in str(remote_error.value)


async def test_a_reply_over_max_payload_fails_the_ask_with_frame_too_large(
    nats_server_factory: Callable[..., NatsServer],
) -> None:
    server = nats_server_factory(config="max_payload: 65536\n")
    async with two_nodes(server) as (a, b):
        b.spawn(Big, name="big")
        ref = await a.remote.lookup("b", "/user/big")
        assert await ref.ask(1000, timeout=10) == b"x" * 1000
        with pytest.raises(FrameTooLarge, match=r"max_payload|fit") as caught:
            await ref.ask(100_000, timeout=10)
        assert not isinstance(caught.value, RemoteActorError)
        # The node serves on.
        assert await ref.ask(10, timeout=10) == b"x" * 10
