"""Reliable delivery between two nodes over a real nats-server: the same API
as in one system (the consumer controller's ref is a ``RemoteRef``), user
types through the node codecs, replies, demand across the wire, and a
consumer node that stops and starts again (a new incarnation registering
to the producer) getting every unconfirmed message."""

from __future__ import annotations

import secrets

import anyio
import msgspec
import pytest

from actors import ActorSystem
from actors.delivery import ConsumerController, ProducerController
from actors.delivery._protocol import Request
from actors.nats import NatsServer
from actors.remote import Remote, RemoteRef
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL, Cluster, fast_detector

from ._links import Consumer, Effects

pytestmark = pytest.mark.anyio


def two_nodes(server: NatsServer) -> Cluster:
    """Nodes "a" and "b" of a cluster of their own, registering ``Job``."""
    return Cluster(server.url, 2, names=("a", "b"), types=[Job])


class Job(msgspec.Struct, frozen=True):
    n: int
    text: str = ""


async def test_a_remote_consumer_gets_every_message_once_in_order(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        effects = Effects()
        controller = ConsumerController.spawn(
            b, b.spawn(Consumer, effects), window=32, name="consumer"
        )
        ref = await a.remote.lookup("b", "/user/consumer")
        assert isinstance(ref, RemoteRef)
        producer = await ProducerController.start(a, "orders", consumer=ref)
        with anyio.fail_after(20):
            for n in range(500):
                await producer.send(Job(n, "x"))
            await producer.wait_confirmed()
        assert [m for _, _, m in effects.seen] == [Job(n, "x") for n in range(500)]
        assert controller.confirmed("orders") == 500
        # The reply of an ask crosses back, decoded by a's codec (a tuple's
        # items as plain values: the node codec's rule).
        with anyio.fail_after(10):
            reply = await producer.ask(Job(-1))
        assert reply == ("done", {"n": -1, "text": ""})


async def test_a_remote_consumer_limits_what_the_producer_sends(
    nats_server: NatsServer,
) -> None:
    async with two_nodes(nats_server) as (a, b):
        effects = Effects()
        effects.gate = anyio.Event()
        ConsumerController.spawn(b, b.spawn(Consumer, effects), window=3, name="c")
        ref = await a.remote.lookup("b", "/user/c")
        producer = await ProducerController.start(a, "p", consumer=ref)
        with anyio.fail_after(10):
            for n in range(3):
                await producer.send(Job(n))
        assert producer.demand == 0
        with anyio.move_on_after(0.3):
            await producer.send(Job(3))
            pytest.fail("a send past the remote consumer's demand went through")
        effects.gate.set()
        with anyio.fail_after(10):
            await producer.send(Job(3))
            await producer.wait_confirmed()
        assert [m.n for _, _, m in effects.seen] == [0, 1, 2, 3]


async def test_an_unregistered_type_to_a_remote_consumer_is_refused_at_send(
    nats_server: NatsServer,
) -> None:
    class Unknown(msgspec.Struct):
        n: int

    async with two_nodes(nats_server) as (a, b):
        ConsumerController.spawn(b, b.spawn(Consumer, Effects()), name="c")
        ref = await a.remote.lookup("b", "/user/c")
        producer = await ProducerController.start(a, "p", consumer=ref)
        with anyio.fail_after(10):
            await producer.send(Job(0))
            with pytest.raises(TypeError, match="not registered"):
                await producer.send(Unknown(1))
            assert await producer.send(Job(1)) == 2  # no number was used
            await producer.wait_confirmed()


async def test_a_consumer_node_that_starts_again_gets_every_unconfirmed_message(
    nats_server: NatsServer,
) -> None:
    cluster = "c" + secrets.token_hex(6)

    def remote(node: str) -> Remote:
        return Remote(
            nats_server.url,
            system=cluster,
            node=node,
            types=[Job],
            heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
            failure_detector=fast_detector,
        )

    async with ActorSystem(remote=remote("a")) as a:
        producer = await ProducerController.start(
            a, "p", resend_interval=0.05, name="producer"
        )
        first = Effects()
        first.gate = anyio.Event()  # the first consumer never confirms
        async with ActorSystem(remote=remote("b"), shutdown_timeout=0.5) as b:
            old = ConsumerController.spawn(b, b.spawn(Consumer, first), window=8)
            old.register_to(await b.remote.lookup("a", "/user/producer"))
            with anyio.fail_after(10):
                for n in range(6):
                    await producer.send(Job(n))
        # b is gone with 6 unconfirmed messages (its handler never returned).
        assert producer.statistics().unconfirmed == 6
        second = Effects()
        async with ActorSystem(remote=remote("b")) as b2:
            new = ConsumerController.spawn(b2, b2.spawn(Consumer, second), window=8)
            new.register_to(await b2.remote.lookup("a", "/user/producer"))
            with anyio.fail_after(20):
                for n in range(6, 10):
                    await producer.send(Job(n))
                await producer.wait_confirmed()
        assert [m.n for _, _, m in second.seen] == list(range(10))
        assert first.seen == []


async def test_a_consumer_looked_up_by_its_registered_name_gets_every_message(
    nats_server: NatsServer,
) -> None:
    async with Cluster(nats_server.url, 2, names=("prod", "cons"), types=[Job]) as (
        p,
        c,
    ):
        effects = Effects()
        cc = ConsumerController.spawn(c, c.spawn(Consumer, effects), window=4)
        c.remote.register("shipping", cc.ref)
        by_name = await p.remote.lookup("cons", "shipping")
        by_path = await p.remote.lookup("cons", cc.ref.path)
        assert by_name != by_path  # a name is not a path: the refs differ
        named = await ProducerController.start(p, "named", consumer=by_name)
        pathed = await ProducerController.start(p, "pathed", consumer=by_path)
        with anyio.fail_after(20):
            for n in range(10):
                await named.send(Job(n))
                await pathed.send(Job(n))
            assert await named.ask(Job(10)) == ("done", {"n": 10, "text": ""})
            await named.wait_confirmed()
            await pathed.wait_confirmed()
        for producer in (named, pathed):
            stats = producer.statistics()
            assert stats.accepted == stats.confirmed_seq_nr
            assert stats.bad_input == 0, stats
        seen = [(pid, m.n) for pid, _, m in effects.seen]
        assert [n for pid, n in seen if pid == "named"] == list(range(11))
        assert [n for pid, n in seen if pid == "pathed"] == list(range(10))


async def test_a_named_consumer_binds_to_the_first_actor_that_answers(
    nats_server: NatsServer,
) -> None:
    async with Cluster(nats_server.url, 2, names=("prod", "cons"), types=[Job]) as (
        p,
        c,
    ):
        effects = Effects()
        cc = ConsumerController.spawn(c, c.spawn(Consumer, effects), window=4)
        other = ConsumerController.spawn(c, c.spawn(Consumer, Effects()))
        c.remote.register("shipping", cc.ref)
        producer = await ProducerController.start(
            p, "named", consumer=await p.remote.lookup("cons", "shipping")
        )
        with anyio.fail_after(20):
            await producer.send(Job(0))
            await producer.wait_confirmed()
            # Another actor of the consumer's node answering for the same
            # numbering, once the name is bound, is refused and counted.
            before = producer.statistics()
            forged = Request("named", producer.epoch, other.ref, 1, 1000)
            endpoint = await c.remote.lookup("prod", producer.ref.path)
            endpoint.tell(forged)
            # The consumer's own answers come after it (FIFO per node pair).
            assert await producer.ask(Job(1)) == ("done", {"n": 1, "text": ""})
        after = producer.statistics()
        assert after.bad_input == before.bad_input + 1
        assert after.demand <= 4  # the forged demand was not believed
        assert [m.n for _, _, m in effects.seen] == [0, 1]
