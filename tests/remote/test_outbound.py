"""Outbound buffers: bounded per peer (MailboxFull, waiting puts), drained by
one writer into frames that respect max_payload, and nothing dropped without
being handed to on_dropped."""

from __future__ import annotations

import random
from collections.abc import Callable

import anyio
import msgspec
import pytest

from actors.mailbox import MailboxFull
from actors.nats import NatsServer, connect
from actors.remote._codec import Codec
from actors.remote._envelopes import TellEnvelope, decode_frame
from actors.remote._errors import FrameTooLarge, NodeUnreachable
from actors.remote._node import NodeAddress
from actors.remote._outbound import Outbound
from actors.remote._subjects import Subjects
from actors.remote._wire import Wire

pytestmark = pytest.mark.anyio

ALPHA = NodeAddress("alpha", "0123456789abcdef")
BETA = NodeAddress("beta", "fedcba9876543210")


class FakeClient:
    """Records publishes; can hold them at a gate or fail them."""

    pending_bytes = 0

    def __init__(self, max_payload: int = 1024 * 1024) -> None:
        self.max_payload = max_payload
        self.published: list[tuple[str, bytes, str | None]] = []
        self.gate: anyio.Event | None = None
        self.entered = anyio.Event()
        self.errors: list[Exception] = []

    async def publish(
        self, subject: str, payload: bytes = b"", *, reply: str | None = None
    ) -> None:
        self.entered.set()
        if self.errors:
            raise self.errors.pop(0)
        if self.gate is not None:
            await self.gate.wait()
        self.published.append((subject, payload, reply))

    def publish_nowait(
        self, subject: str, payload: bytes = b"", *, reply: str | None = None
    ) -> None:
        if self.errors:
            raise self.errors.pop(0)
        self.published.append((subject, payload, reply))

    def envelopes(self) -> list[int]:
        """The ``n`` of every Tell published, in order."""
        out = []
        for _, payload, _ in self.published:
            for envelope in decode_frame(payload, 1 << 30).envelopes:
                assert isinstance(envelope, TellEnvelope)
                out.append(CODEC.decode(envelope.tag, envelope.body))
        return out


CODEC = Codec()
WIRE = Wire(CODEC, ALPHA)


def envelope(n: int) -> bytes:
    return WIRE.tell("/user/x", n)


def outbound(
    client: FakeClient,
    *,
    capacity: int = 100,
    on_dropped: Callable[[list[bytes], BaseException], None] | None = None,
) -> Outbound:
    return Outbound(
        BETA,
        WIRE,
        client,
        subject="inbox.beta",
        reply="returns.beta",
        capacity=capacity,
        on_dropped=on_dropped,
    )


async def until(condition: Callable[[], bool]) -> None:
    """Step with checkpoints until ``condition`` holds (never sleeps)."""
    for _ in range(10_000):
        if condition():
            return
        await anyio.lowlevel.checkpoint()
    raise AssertionError("the condition never held")


async def test_envelopes_buffered_before_the_writer_wakes_go_out_in_one_frame() -> None:
    client = FakeClient()
    out = outbound(client)
    for n in range(100):
        out.try_put(envelope(n))
    out.close()
    await out.run()  # publishes what is buffered, then returns
    assert len(client.published) == 1
    subject, _, reply = client.published[0]
    # Frames are numbered: the last token of their reply subject.
    assert (subject, reply) == ("inbox.beta", "returns.beta.1")
    assert client.envelopes() == list(range(100))
    stats = out.statistics()
    assert (stats.frames, stats.envelopes, stats.dropped) == (1, 100, 0)


async def test_a_batch_over_max_payload_is_split_into_frames_that_fit() -> None:
    client = FakeClient(max_payload=200)
    out = outbound(client, capacity=1000)
    for n in range(500):
        out.try_put(envelope(n))
    out.close()
    await out.run()
    assert len(client.published) > 1
    assert all(len(payload) <= 200 for _, payload, _ in client.published)
    assert client.envelopes() == list(range(500))


async def test_an_envelope_that_cannot_fit_a_frame_is_refused_at_the_call() -> None:
    client = FakeClient(max_payload=100)
    out = outbound(client)
    big = WIRE.tell("/user/x", "x" * 100)
    with pytest.raises(FrameTooLarge, match="does not fit one NATS message"):
        out.try_put(big)
    with pytest.raises(FrameTooLarge):
        await out.put(big)
    assert out.statistics().queued == 0


async def test_try_put_on_a_full_buffer_raises_mailbox_full_and_queues_nothing() -> (
    None
):
    out = outbound(FakeClient(), capacity=3)
    for n in range(3):
        out.try_put(envelope(n))
    with pytest.raises(MailboxFull, match="full"):
        out.try_put(envelope(3))
    assert out.statistics().queued == 3


async def test_system_envelopes_pass_a_full_buffer_in_their_fifo_place() -> None:
    # A reply, a heartbeat or a death notice is never refused for capacity,
    # and a death notice never overtakes the messages sent before it.
    client = FakeClient()
    out = outbound(client, capacity=2)
    out.try_put(envelope(0))
    out.put_system(envelope(1))
    out.try_put(envelope(2))
    with pytest.raises(MailboxFull):
        out.try_put(envelope(3))
    out.put_system(envelope(4))
    stats = out.statistics()
    assert (stats.queued, stats.queued_system) == (2, 2)
    out.close()
    with pytest.raises(NodeUnreachable):
        out.put_system(envelope(5))
    await out.run()
    assert client.envelopes() == [0, 1, 2, 4]


async def test_put_waits_for_room_and_keeps_fifo() -> None:
    client = FakeClient()
    out = outbound(client, capacity=2)
    out.try_put(envelope(0))
    out.try_put(envelope(1))
    async with anyio.create_task_group() as tg:

        async def put_more() -> None:
            await out.put(envelope(2))
            await out.put(envelope(3))

        tg.start_soon(put_more)
        await until(lambda: out.statistics().waiting_senders == 1)
        with pytest.raises(MailboxFull):  # nobody barges past a waiting sender
            out.try_put(envelope(99))
        tg.start_soon(out.run)
        await until(lambda: len(client.envelopes()) == 4)
        out.close()
    assert client.envelopes() == [0, 1, 2, 3]


async def test_put_now_publishes_at_once_only_with_nothing_buffered_or_in_hand() -> (
    None
):
    client = FakeClient()
    out = outbound(client)
    assert out.put_now(envelope(0))  # nothing buffered: at once, own frame
    assert len(client.published) == 1
    out.try_put(envelope(1))  # buffered, the writer not running yet
    assert not out.put_now(envelope(2))  # it would overtake envelope 1
    out.put_system(envelope(2))
    async with anyio.create_task_group() as tg:
        tg.start_soon(out.run)
        await until(lambda: len(client.published) == 2)
        await until(lambda: out._writer.idle)  # it waits for more
        assert out.put_now(envelope(3))  # at once again, before any checkpoint
        assert len(client.published) == 3
        out.close()
        assert not out.put_now(envelope(4))  # closed: refused, never published
    assert client.envelopes() == [0, 1, 2, 3]
    assert out.statistics().direct == 2


async def test_a_cancelled_put_leaves_nothing_behind() -> None:
    client = FakeClient()
    out = outbound(client, capacity=1)
    out.try_put(envelope(0))
    with anyio.move_on_after(0):
        await out.put(envelope(1))
    assert out.statistics().queued == 1
    out.close()
    await out.run()
    assert client.envelopes() == [0]


async def test_after_close_puts_raise_node_unreachable_also_waiting_ones() -> None:
    out = outbound(FakeClient(), capacity=1)
    out.try_put(envelope(0))
    failures: list[BaseException] = []
    async with anyio.create_task_group() as tg:

        async def waiting_put() -> None:
            try:
                await out.put(envelope(1))
            except NodeUnreachable as exc:
                failures.append(exc)

        tg.start_soon(waiting_put)
        await until(lambda: out.statistics().waiting_senders == 1)
        out.close()
    assert len(failures) == 1
    with pytest.raises(NodeUnreachable):
        out.try_put(envelope(2))
    with pytest.raises(NodeUnreachable):
        await out.put(envelope(2))
    assert out.closed


async def test_abort_hands_what_is_buffered_to_on_dropped_with_the_reason() -> None:
    dropped: list[tuple[list[bytes], BaseException]] = []
    client = FakeClient()
    out = outbound(client, on_dropped=lambda e, why: dropped.append((e, why)))
    for n in range(4):
        out.try_put(envelope(n))
    out.put_system(envelope(4))
    reason = NodeUnreachable("beta is down")
    out.abort(reason)
    await out.run()  # returns at once: nothing left
    assert client.published == []
    assert dropped == [([envelope(n) for n in range(5)], reason)]
    assert out.statistics().dropped == 5
    with pytest.raises(NodeUnreachable) as info:
        out.try_put(envelope(9))
    assert info.value.__cause__ is reason


async def test_a_frame_the_client_refuses_is_dropped_and_the_writer_goes_on() -> None:
    dropped: list[tuple[list[bytes], BaseException]] = []
    client = FakeClient()
    out = outbound(client, on_dropped=lambda e, why: dropped.append((e, why)))
    error = ConnectionError("disconnected and full")
    client.errors.append(error)
    out.try_put(envelope(0))
    async with anyio.create_task_group() as tg:
        tg.start_soon(out.run)
        await until(lambda: bool(dropped))
        out.try_put(envelope(1))
        await until(lambda: bool(client.published))
        out.close()
    assert dropped == [([envelope(0)], error)]
    assert client.envelopes() == [1]


async def test_a_writer_cancelled_mid_publish_hands_its_envelopes_to_on_dropped() -> (
    None
):
    dropped: list[tuple[list[bytes], BaseException]] = []
    client = FakeClient()
    client.gate = anyio.Event()  # never set: publish waits
    out = outbound(client, on_dropped=lambda e, why: dropped.append((e, why)))
    for n in range(3):
        out.try_put(envelope(n))
    async with anyio.create_task_group() as tg:
        tg.start_soon(out.run)
        await client.entered.wait()
        tg.cancel_scope.cancel()
    assert [e for e, _ in dropped] == [[envelope(0), envelope(1), envelope(2)]]
    assert isinstance(dropped[0][1], anyio.get_cancelled_exc_class())


async def test_an_envelope_over_a_max_payload_that_shrank_is_dropped_not_sent() -> None:
    dropped: list[tuple[list[bytes], BaseException]] = []
    client = FakeClient()
    out = outbound(client, on_dropped=lambda e, why: dropped.append((e, why)))
    big = WIRE.tell("/user/x", "x" * 300)
    out.try_put(envelope(0))
    out.try_put(big)
    out.try_put(envelope(1))
    client.max_payload = 200  # a reconnection to a stricter server
    out.close()
    await out.run()
    assert client.envelopes() == [0, 1]
    assert len(dropped) == 1 and dropped[0][0] == [big]
    assert isinstance(dropped[0][1], FrameTooLarge)


def test_bad_capacity_and_batch_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="capacity"):
        outbound(FakeClient(), capacity=0)
    with pytest.raises(TypeError, match="batch"):
        Outbound(BETA, WIRE, FakeClient(), subject="s", batch=1.5)  # type: ignore[arg-type]


# -- through a real server ---------------------------------------------------------


async def test_frames_through_nats_arrive_in_order_and_batched(
    nats_server: NatsServer,
) -> None:
    subjects = Subjects("t", ALPHA)
    async with connect(nats_server.url) as nc:
        sub = await nc.subscribe(subjects.inbox_of(BETA), max_pending=100_000)
        await nc.flush()
        out = Outbound(BETA, WIRE, nc, subject=subjects.inbox_of(BETA), capacity=10_000)
        async with anyio.create_task_group() as tg:
            tg.start_soon(out.run)
            for n in range(5000):
                await out.put(envelope(n))
            out.close()
        got: list[int] = []
        frames = 0
        while len(got) < 5000:
            msg = await sub.next_msg(timeout=10)
            frames += 1
            for env in decode_frame(msg.data, nc.max_payload).envelopes:
                assert isinstance(env, TellEnvelope)
                got.append(CODEC.decode(env.tag, env.body))
        assert got == list(range(5000))
        assert frames < 500  # batched: far fewer NATS messages than envelopes


async def test_a_frame_to_a_node_nobody_serves_returns_no_responders_naming_it(
    nats_server: NatsServer,
) -> None:
    # The peer's inbox has no subscriber (it stopped, or restarted as a new
    # incarnation): NATS answers on the return subject, which names the peer.
    subjects = Subjects("t", NodeAddress.new("alpha"))
    gone = NodeAddress.new("beta")
    async with connect(nats_server.url) as nc:
        returns = await nc.subscribe(subjects.returns)
        await nc.flush()
        out = Outbound(
            gone,
            WIRE,
            nc,
            subject=subjects.inbox_of(gone),
            reply=subjects.return_for(gone),
        )
        out.try_put(envelope(1))
        out.close()
        await out.run()
        msg = await returns.next_msg(timeout=10)
        assert msg.status == 503
        assert subjects.peer_of_return(msg.subject) == gone


async def test_frames_respect_a_small_server_max_payload(
    nats_server_factory: Callable[..., NatsServer],
) -> None:
    server = nats_server_factory(config="max_payload: 1024")
    async with connect(server.url) as nc:
        assert nc.max_payload == 1024
        sub = await nc.subscribe("small.inbox", max_pending=10_000)
        await nc.flush()
        out = Outbound(BETA, WIRE, nc, subject="small.inbox", capacity=10_000)
        payload = "y" * 900
        with pytest.raises(FrameTooLarge):
            out.try_put(WIRE.tell("/user/x", "z" * 1024))
        for _ in range(20):
            out.try_put(WIRE.tell("/user/x", payload))
        out.close()
        await out.run()
        seen = 0
        while seen < 20:
            msg = await sub.next_msg(timeout=10)
            assert len(msg.data) <= 1024
            seen += len(decode_frame(msg.data, 1024).envelopes)
        assert seen == 20


class FlakyClient:
    """Publishes after a random checkpoint, or fails a frame at random."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.max_payload = 400
        self.published: list[bytes] = []

    async def publish(
        self, subject: str, payload: bytes = b"", *, reply: str | None = None
    ) -> None:
        if self.rng.random() < 0.3:
            await anyio.lowlevel.checkpoint()
        if self.rng.random() < 0.1:
            raise ConnectionError("the frame was refused")
        self._record(payload)

    #: Bytes the client holds unwritten (``put_now`` publishes only at 0).
    pending_bytes = 0

    def publish_nowait(
        self, subject: str, payload: bytes = b"", *, reply: str | None = None
    ) -> None:
        if self.rng.random() < 0.1:
            raise ConnectionError("the frame was refused")
        self._record(payload)

    def _record(self, payload: bytes) -> None:
        for env in decode_frame(payload, 1 << 20).envelopes:
            assert isinstance(env, TellEnvelope)
            self.published.append(bytes(env.body))


@pytest.mark.parametrize("seed", range(6))
async def test_random_interleavings_lose_nothing_and_keep_fifo_per_sender(
    seed: int,
) -> None:
    # Every envelope is published, handed to on_dropped, or refused at its
    # call, exactly once; what is published keeps each sender's order.
    rng = random.Random(seed)
    client = FlakyClient(rng)
    dropped: list[bytes] = []
    out = Outbound(
        BETA,
        WIRE,
        client,
        subject="s",
        capacity=rng.randint(1, 8),
        batch=rng.randint(1, 16),
        on_dropped=lambda envs, why: dropped.extend(envs),
    )
    refused: list[bytes] = []
    sent: list[bytes] = []
    abort_at = rng.choice([None, rng.randint(50, 500)])

    async def producer(p: int) -> None:
        for i in range(150):
            data = WIRE.tell("/user/x", [p, i])
            sent.append(data)
            if abort_at is not None and len(sent) == abort_at:
                out.abort(NodeUnreachable("gone"))
            op = rng.random()
            try:
                if op < 0.3:
                    out.try_put(data)
                elif op < 0.4:
                    out.put_system(data)
                elif op < 0.5:
                    # An ask's or answer's way: at once if that keeps FIFO.
                    if not out.put_now(data):
                        out.put_system(data)
                else:
                    with anyio.move_on_after(0 if rng.random() < 0.3 else 30) as scope:
                        await out.put(data)
                    if scope.cancelled_caught:
                        refused.append(data)
            except (MailboxFull, NodeUnreachable):
                refused.append(data)
            if rng.random() < 0.3:
                await anyio.lowlevel.checkpoint()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as writer:
            writer.start_soon(out.run)
            async with anyio.create_task_group() as producers:
                for p in range(4):
                    producers.start_soon(producer, p)
            out.close()

    def body(data: bytes) -> bytes:
        envelope = decode_frame(WIRE.frame([data]), 1 << 20).envelopes[0]
        assert isinstance(envelope, TellEnvelope)
        return bytes(envelope.body)

    published = client.published
    accounted = published + [body(d) for d in dropped + refused]
    assert sorted(accounted) == sorted(body(d) for d in sent)
    for p in range(4):
        order = [i for q, i in (msgspec.msgpack.decode(b) for b in published) if q == p]
        assert order == sorted(order)
