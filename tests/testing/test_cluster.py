"""The cluster fixture: systems joined through one nats-server, and a node
taken out with kill(i)."""

from __future__ import annotations

from typing import Any

import pytest

from actors import Actor, ActorNotFound, StopReason
from actors.remote import NodeDown, NodeUnreachable
from actors.testing import TestProbe

pytestmark = pytest.mark.anyio


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


async def test_nodes_of_a_cluster_ask_each_other_and_see_a_killed_node_go(
    cluster: Any,
) -> None:
    async with cluster(3) as nodes:
        assert len(nodes) == 3
        nodes[2].spawn(Echo, name="echo")
        ref = await nodes[0].remote.lookup("node-2", "/user/echo")
        assert await ref.ask("hello") == "hello"
        probe: TestProbe[Any] = TestProbe(nodes[1])
        probe.watch(await nodes[1].remote.lookup("node-2", "/user/echo"))
        nodes.kill(2)
        await nodes.wait_down(2)
        assert not nodes.is_up(2)
        terminated = await probe.expect_message(lambda m: m.ref.path == "/user/echo")
        # Its actors were cancelled, not stopped: the watcher learns the node
        # is gone (or, if the node's leave got out first, that it stopped; or,
        # if the watch reached the leaving node after its actors were gone,
        # that the actor is not there, as a watch of a dead actor).
        assert (
            isinstance(terminated.reason, NodeDown | ActorNotFound)
            or terminated.reason is StopReason.SYSTEM
        )
        assert nodes.is_up(0) and nodes.is_up(1)


async def test_two_clusters_on_one_server_never_see_each_other(cluster: Any) -> None:
    async with cluster(2) as a, cluster(1) as b:
        assert a.name != b.name
        a[1].spawn(Echo, name="echo")
        assert await (await a[0].remote.lookup("node-1", "/user/echo")).ask(1) == 1
        with pytest.raises(NodeUnreachable):
            await b[0].remote.lookup("node-1", "/user/echo", timeout=1.0)


def test_a_cluster_needs_at_least_one_node(nats_server: Any) -> None:
    from actors.testing._cluster import Cluster

    with pytest.raises(ValueError, match="n must be at least 1"):
        Cluster(nats_server.url, 0)
