"""``python -m actors.node`` against stops from the network: the frame
``[1, null, [[11, "/user"]]]`` made the node process exit with status 0
(the Stop branch stopped whatever the path resolved to, the guardian
included). Now a stop of the guardians, ``/system`` or the node agent is
refused and counted, whoever sends it, and the node serves on."""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import pytest

from actors import ActorSystem
from actors.nats import NatsServer, connect
from actors.remote.scaleout import AGENT_NAME

from ._process import node_process
from ._workers import Echo
from .conftest import remote

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes"),
]


async def test_a_node_process_ignores_stops_of_its_guardians_and_agent(
    nats_server: NatsServer, system_name: str, anyio_backend: Any
) -> None:
    url = nats_server.url
    loop, options = anyio_backend
    backend = "uvloop" if options else loop
    # The child runs on the test's own backend (asyncio, uvloop or trio).
    async with (
        ActorSystem(remote=remote(url, system_name, "spawner")) as spawner,
        node_process(url, system_name, "child", "--backend", backend) as child,
        connect(url) as raw,
    ):
        agent = await spawner.remote.lookup("child", AGENT_NAME, timeout=10)
        name = f"actors.{system_name}.child"
        inbox = f"{name}.{agent.node.incarnation}"
        encode = msgspec.msgpack.encode
        paths = ["/user", "/system", "/user/node-agent", AGENT_NAME]
        await raw.publish(inbox, encode([1, None, [[11, "/user"]]]))
        await raw.publish(name, encode([1, None, [[11, path] for path in paths]]))
        agent.stop()  # from a node of the cluster: refused as well
        # Answered after the stops (one connection, in order): handled.
        lookup = encode([1, None, [[9, 1, "/user"]]])
        answer = msgspec.msgpack.decode(
            (await raw.request(name, lookup, timeout=10)).data
        )
        assert answer[2] == [[10, 1, True]]
        ref: Any = await spawner.remote.spawn("child", Echo, "still serving")
        assert await ref.ask("args", timeout=10) == [["still serving"], {}]
        assert child.process.returncode is None
