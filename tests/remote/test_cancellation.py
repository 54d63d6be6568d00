"""Cancelling a remote ask, send or join at every await leaves nothing behind:
no pending-ask entry, no dependency on the peer, no waiting sender nor
buffered envelope, no watcher; a reply that comes after its ask was cancelled
is counted as late (once) and never handed to another ask.

The sweep cancels the operation's scope from another task after that task
made k checkpoints, for k = 0, 1, 2, ...: the cancellation lands at each
point where the operation can be suspended, until the operation completes
before it (several times in a row)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, AskTimeout, MailboxFull
from actors.nats import Msg, NatsServer, connect
from actors.nats._protocol import new_nuid
from actors.remote import NodeAddress, RefAddress, Remote, RemoteRef
from actors.remote._envelopes import ShareEnvelope, TellEnvelope, decode_frame
from actors.remote._outbound import MIN_WINDOW

pytestmark = pytest.mark.anyio

#: Completions in a row that end a sweep: later cancellations come too late.
STREAK = 5
#: A sweep that never completes gives up here (a blocked operation).
MAX_K = 400


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


async def _cancel_after(k: int, scope: anyio.CancelScope) -> None:
    for _ in range(k):
        await anyio.lowlevel.checkpoint()
    scope.cancel()


async def sweep(
    operation: Callable[[int], Awaitable[object]],
    check: Callable[[], None],
    *,
    until_complete: bool = True,
    limit: int = MAX_K,
) -> tuple[int, int]:
    """Run ``operation(k)`` with its scope cancelled after k checkpoints of
    another task, k = 0, 1, ...; ``check()`` after each run. Stops after
    ``STREAK`` completions in a row (or at ``limit`` when ``until_complete``
    is False). Returns (cancelled, completed)."""
    cancelled = completed = streak = 0
    k = 0
    while streak < STREAK:
        assert k < limit or not until_complete, "the operation never completed"
        if k >= limit:
            break
        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as scope:
                tg.start_soon(_cancel_after, k, scope)
                await operation(k)
        if scope.cancelled_caught:
            cancelled += 1
            streak = 0
        else:
            completed += 1
            streak += 1
        check()
        k += 1
    return cancelled, completed


async def test_a_remote_ask_cancelled_at_any_await_leaves_nothing_behind(
    nats_server: NatsServer,
) -> None:
    system = "c" + new_nuid(10)
    async with (
        ActorSystem(remote=Remote(nats_server.url, system=system, node="b")) as b,
        ActorSystem(remote=Remote(nats_server.url, system=system, node="a")) as a,
    ):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        remote = a.remote

        async def ask(k: int) -> None:
            # Each ask's reply is its own: never another ask's late one.
            assert await ref.ask(("k", k), timeout=30) == ("k", k)

        def check() -> None:
            assert remote.asks_in_flight == 0
            assert remote._parts.monitor.depended == {}

        cancelled, completed = await sweep(ask, check)
        assert cancelled and completed
        # Every cancelled ask was published and answered: its reply, late,
        # is counted once. Replies come in FIFO order, so they are all in
        # once a last ask is answered.
        assert await ref.ask("last", timeout=30) == "last"
        assert remote.late_replies == cancelled
        assert b.remote.serving == 0
        check()


async def test_a_remote_join_cancelled_at_any_await_leaves_no_watcher(
    nats_server: NatsServer,
) -> None:
    system = "c" + new_nuid(10)
    async with (
        ActorSystem(remote=Remote(nats_server.url, system=system, node="b")) as b,
        ActorSystem(remote=Remote(nats_server.url, system=system, node="a")) as a,
    ):
        echo = b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")

        async def join(k: int) -> None:
            await ref.join()  # the actor never stops: always cancelled

        def check() -> None:
            assert a.remote.watching == 0
            assert a.remote._parts.monitor.depended == {}

        cancelled, _ = await sweep(join, check, until_complete=False, limit=30)
        assert cancelled == 30
        # The unwatches went out in order with the watches: b watches
        # nothing for a once an ask behind them is answered.
        assert await ref.ask(1, timeout=30) == 1
        assert not any(b.remote._parts.watch.watched.get(echo, {}).values())


async def _full_buffer(
    a: ActorSystem, peer: NodeAddress, capacity: int
) -> tuple[RemoteRef[Any], Any]:
    """Fill the window and the buffer to a peer that never acks."""
    ref = RemoteRef[Any](a.remote, RefAddress(peer.node, peer.incarnation, "/x"))
    ref.tell(b"x" * 1024)
    outbound = a.remote._parts.peers.outbounds[peer]
    with anyio.fail_after(10):
        while True:
            try:
                ref.tell(b"x" * 1024)
            except MailboxFull:
                if outbound.statistics().in_flight >= MIN_WINDOW:
                    break
                await anyio.lowlevel.checkpoint()
    return ref, outbound


async def test_asks_and_sends_cancelled_while_waiting_for_room_send_nothing(
    nats_server: NatsServer,
) -> None:
    # The outbound buffer to a peer that never acks is full: an ask or a
    # send waits for room. Cancelled there (at any await), or timed out, it
    # leaves no waiting sender and buffers nothing; once the peer acks, only
    # the tells buffered before go out.
    system = "c" + new_nuid(10)
    peer = NodeAddress.new("slow")
    tells: list[object] = []

    def on_frame(msg: Msg) -> None:
        for envelope in decode_frame(msg.data, 1 << 22).envelopes:
            if type(envelope) is not ShareEnvelope:  # the share handshake
                tells.append(type(envelope))

    capacity = 4
    async with (
        connect(nats_server.url) as raw,
        ActorSystem(
            remote=Remote(
                nats_server.url,
                system=system,
                node="a",
                capacity=capacity,
                window=MIN_WINDOW,
            )
        ) as a,
    ):
        await raw.subscribe(
            f"actors.{system}.slow.{peer.incarnation}", callback=on_frame
        )
        await raw.flush()
        ref, outbound = await _full_buffer(a, peer, capacity)
        remote = a.remote

        def check() -> None:
            stats = outbound.statistics()
            assert stats.waiting_senders == 0
            assert stats.queued == capacity
            assert remote.asks_in_flight == 0
            assert remote._parts.monitor.depended == {}

        async def ask(k: int) -> None:
            await ref.ask(k, timeout=60)

        async def send(k: int) -> None:
            await ref.send(k)

        for operation in (ask, send):
            cancelled, _ = await sweep(operation, check, until_complete=False, limit=20)
            assert cancelled == 20
        with pytest.raises(AskTimeout):
            await ref.ask("late", timeout=0.05)
        check()

        # The peer acks: what was buffered goes out, and nothing else.
        await raw.flush()
        published = outbound.statistics().envelopes
        with anyio.fail_after(10):
            while outbound.statistics().queued:
                outbound.acked(outbound.statistics().frames)
                await anyio.lowlevel.checkpoint()
        await remote._client.flush()  # type: ignore[union-attr]
        await raw.flush()
        assert outbound.statistics().envelopes == published + capacity
        assert set(tells) == {TellEnvelope}
        assert len(tells) == published + capacity
