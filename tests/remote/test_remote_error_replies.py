"""An ErrorReply answers a remote ask too: the remote asker raises the
exception (as any handler exception crosses the codec), and the actor does
not fail."""

from __future__ import annotations

from typing import Any

import pytest

from actors import Actor, ActorSystem, ErrorReply
from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.remote import Remote, RemoteActorError

pytestmark = pytest.mark.anyio


class Secret(Exception):
    pass


class Refuses(Actor):
    def receive(self, message: Any) -> Any:
        if message == "known":
            return ErrorReply(ValueError("refused"))
        if message == "unknown":
            return ErrorReply(Secret("hidden"))
        return message


async def test_an_error_reply_to_a_remote_ask_raises_at_the_asker(
    nats_server: NatsServer,
) -> None:
    name = "t" + new_nuid(10)
    async with (
        ActorSystem(remote=Remote(nats_server.url, system=name, node="a")) as a,
        ActorSystem(remote=Remote(nats_server.url, system=name, node="b")) as b,
    ):
        b.spawn(Refuses, name="refuses")
        ref = await a.remote.lookup("b", "/user/refuses")
        with pytest.raises(ValueError, match="refused"):
            await ref.ask("known")
        with pytest.raises(RemoteActorError) as info:
            await ref.ask("unknown")
        assert info.value.type_name.endswith("Secret")
        assert await ref.ask("fine") == "fine"
        assert (b.failures, b.restarts) == (0, 0)
