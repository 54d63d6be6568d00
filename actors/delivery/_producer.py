"""``ProducerController``: the sending side of point-to-point reliable
delivery (as Akka's ``ProducerController``), a handle over the sending
state (``_channel``) and an endpoint actor that receives the consumer's
``Request``, ``Resend`` and ``Register`` messages and runs the resend timer.

The state lives in the handle, so a restart of the endpoint actor keeps the
unconfirmed messages (the restarted actor says ``Hello`` again and resends
them). With a durable queue the messages are stored before ``send``
returns, and a controller started again on the same queue (after the
process died) resends what was not confirmed.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

import anyio

from .. import ActorContext, ActorRef, ActorSystem
from ._channel import Channel, FlushDue, Pending
from ._durable_queue import DurableProducerQueue
from ._protocol import Register, Request, Resend
from ._sending import TICK, Sender, SenderEndpoint
from ._validation import (
    check_count,
    check_id,
    check_seconds,
    check_seq_nr,
    spawner_system,
)
from ._wire import prepare

__all__ = ["ProducerController", "ProducerStatistics"]

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class ProducerStatistics:
    """What a producer controller did (``producer.statistics()``).

    Attributes:
        accepted: messages accepted (numbered) so far by this controller.
        confirmed_seq_nr: the highest confirmed number.
        unconfirmed: messages accepted and not confirmed.
        demand: messages that may be accepted now.
        resent: messages sent again (timer, ``Resend``, a new consumer).
        lost_sends: sends that failed at once (a full buffer, a node gone),
            left to the resend timer.
        bad_input: consumer messages dropped as invalid.
    """

    accepted: int
    confirmed_seq_nr: int
    unconfirmed: int
    demand: int
    resent: int
    lost_sends: int
    bad_input: int


class _Endpoint(SenderEndpoint):
    """The producer's actor: the consumer's answers and the resend timer."""

    owner: ProducerController[Any]

    def on_start(self) -> None:
        channel = self.owner.channel
        channel.endpoint = self.context.self_ref
        interval = channel.resend_interval
        self.context.timers.start_periodic("resend", TICK, interval)
        if channel.consumer is not None:
            # A restarted endpoint: say who we are again, resend on answer.
            consumer, channel.consumer = channel.consumer, None
            channel.attach(consumer)

    async def receive(self, message: object) -> None:
        owner = self.owner
        channel = owner.channel
        if type(message) is FlushDue:
            channel.run_flush()
        elif type(message) is Request:
            done = channel.on_request(message)
            if done and owner.queue is not None and not owner.failed:
                await owner.queue.confirm(channel.confirmed)
        elif message is TICK:
            channel.tick()
        elif type(message) is Resend:
            channel.on_resend(message)
        elif type(message) is Register:
            channel.attach(message.consumer)
        else:
            channel.bad_input += 1


class ProducerController(Sender, Generic[M]):
    """The sending side of reliable delivery of messages of type ``M`` to one
    consumer controller, local or on another node (as Akka's
    ``ProducerController``): made by
    [``start``][actors.delivery.ProducerController.start].

    Guarantees: every message ``send`` accepted reaches the consumer's
    handler, in order, and (while its consumer controller lives) once; it is
    resent until confirmed: after ``resend_interval`` seconds without a
    confirmation, when the consumer reports a gap, when a new consumer
    registers. The consumer's demand bounds what is in flight: ``send``
    waits while the consumer has not asked for more (backpressure), and at
    most ``max_unconfirmed`` messages are held. Without a ``queue`` the
    unconfirmed messages live in this process (at-least-once while it
    lives); with a [``DurableProducerQueue``][actors.delivery.DurableProducerQueue]
    they are stored before ``send`` returns and survive its death.

    Attributes:
        producer_id: the producer's id (the consumer's key for dedup).
        epoch: the numbering (new per controller without a queue; the
            queue's, kept across restarts, with one).
        ref: the endpoint actor's ref: consumers register to it
            (``ConsumerController.register_to``); register it on the node
            for consumers of other nodes.
        queue: the durable queue, or None.
    """

    def __init__(
        self,
        system: ActorSystem[Any],
        producer_id: str,
        epoch: str,
        queue: DurableProducerQueue | None,
        channel: Channel,
    ) -> None:
        super().__init__(system, f"producer {producer_id!r}")
        self.producer_id = producer_id
        self.epoch = epoch
        self.queue = queue
        self.channel = channel
        self._lock = anyio.Lock()
        #: Sends in ``_accept``, waiting for the lock or holding it: the
        #: fast path must not pass them (``_lock.locked()``, without a call).
        self._accepting = 0
        self._accepted = 0

    @classmethod
    async def start(
        cls,
        spawner: ActorSystem[Any] | ActorContext,
        producer_id: str,
        *,
        consumer: ActorRef[Any] | None = None,
        queue: DurableProducerQueue | None = None,
        resend_interval: float = 1.0,
        max_unconfirmed: int = 1024,
        name: str | None = None,
    ) -> ProducerController[Any]:
        """Make a producer controller (recovering its queue first) and spawn
        its endpoint actor as a child of ``spawner``.

        Args:
            spawner: a system, or an actor's context.
            producer_id: the producer's id (1-255 printable characters):
                unique among the producers a consumer hears from.
            consumer: the consumer controller's ref (or
                ``register_consumer`` later, or the consumer's
                ``register_to``).
            queue: a durable queue: messages stored before ``send``
                returns, the unconfirmed ones resent after a restart.
            resend_interval: seconds without a confirmation before the
                unconfirmed messages are sent again.
            max_unconfirmed: the most messages accepted and not confirmed
                (the demand never exceeds it).
            name: the endpoint actor's name.

        Raises:
            TypeError, ValueError: a bad argument, naming it.
            actors.persistence.JournalError: the queue could not be read.
            actors.SystemNotRunning: the system is not running (nothing was
                done: a durable queue is not loaded).
        """
        producer_id = check_id("producer_id", producer_id)
        interval = check_seconds("resend_interval", resend_interval)
        most = check_count("max_unconfirmed", max_unconfirmed)
        if queue is not None and not isinstance(queue, DurableProducerQueue):
            raise TypeError(f"queue must be a DurableProducerQueue, not {queue!r}")
        if consumer is not None and not isinstance(consumer, ActorRef):
            raise TypeError(f"consumer must be an ActorRef, not {consumer!r}")
        system = spawner_system(spawner)
        prepare(system)
        if queue is None:
            epoch = secrets.token_hex(8)
            channel = Channel(
                system,
                producer_id,
                epoch,
                max_unconfirmed=most,
                resend_interval=interval,
            )
        else:
            loaded = await queue.load(producer_id)
            epoch = loaded.epoch
            channel = Channel(
                system,
                producer_id,
                epoch,
                next_seq_nr=loaded.confirmed + 1,
                confirmed=loaded.confirmed,
                max_unconfirmed=max(most, len(loaded.unconfirmed)),
                resend_interval=interval,
            )
            for seq_nr, message in loaded.unconfirmed:
                channel.restore(seq_nr, message)
            channel.next_seq_nr = max(channel.next_seq_nr, loaded.next_seq_nr)
        self = cls(system, producer_id, epoch, queue, channel)
        factory: Callable[[], _Endpoint] = partial(_Endpoint, self)
        self.ref = spawner.spawn(factory, name=name)
        channel.endpoint = self.ref
        if consumer is not None:
            channel.attach(consumer)
        return self

    # -- connecting ------------------------------------------------------------

    def register_consumer(self, consumer: ActorRef[Any]) -> None:
        """Send to ``consumer`` (a consumer controller's ``ref``, local or
        remote) from now on; the unconfirmed messages go to it again.

        Raises:
            TypeError: ``consumer`` is not an ActorRef.
            ProducerFailed, ProducerStopped, ProducerSystemExited: the
                controller has ended (as ``send``).
        """
        if not isinstance(consumer, ActorRef):
            raise TypeError(f"consumer must be an ActorRef, not {consumer!r}")
        self._check()
        self.channel.attach(consumer)

    # -- sending ---------------------------------------------------------------

    @property
    def demand(self) -> int:
        """How many messages ``send`` would accept now without waiting."""
        return self.channel.demand

    @property
    def next_seq_nr(self) -> int:
        """The number the next accepted message gets."""
        return self.channel.next_seq_nr

    @property
    def confirmed_seq_nr(self) -> int:
        """The highest confirmed sequence number (0: none)."""
        return self.channel.confirmed

    async def send(self, message: M) -> int:
        """Accept ``message``: wait for demand, number it, store it (with a
        durable queue), send it; return its sequence number. It reaches the
        consumer's handler (it is resent until confirmed). Returns without
        yielding when there is demand, nobody waits before it and there is no
        durable queue (as ``ActorRef.send`` with room).

        Cancellation: a send cancelled while it waits for demand accepts
        nothing; one cancelled while its message is being stored may have
        stored it (it is then delivered).

        Raises:
            ProducerFailed: the durable queue failed on an earlier send (or
                while this one waited).
            ProducerStopped: the controller was stopped (``stop()``, or its
                actor stopped: its parent's or its system's stop), before
                or while this waited; also an ``ActorStopped``.
            ProducerSystemExited: the system has exited (also a
                ``SystemNotRunning``).
            actors.persistence.JournalError, SequenceConflict: the durable
                queue failed to store this message (another process runs
                this producer id, for SequenceConflict); later sends raise
                ``ProducerFailed``.
            TypeError: the consumer is on another node and its codec cannot
                encode ``message`` (nothing accepted).
            actors.persistence.EventsRejected: the queue's codec cannot
                encode ``message`` (nothing accepted).
        """
        channel = self.channel
        if (
            not self._accepting
            and self.queue is None
            and self.failed is None
            # channel.demand > 0, written out (two calls saved per message)
            and channel.consumer is not None
            and channel.up_to >= channel.next_seq_nr
            and self.system.running
        ):
            # The fast path, as ActorRef.send: room, nobody waiting, nothing
            # to store: accept and send without yielding.
            pending = channel.reserve(message, False)
            self._accepted += 1
            if channel.flush_due:
                # What ready() does then, without the call: the flush on its
                # way sends this one too.
                pending.ready = True
            else:
                channel.ready(pending)
            return pending.seq_nr
        pending = await self._accept(message, False)
        return pending.seq_nr

    async def ask(self, message: M, timeout: float | None = None) -> Any:
        """As ``send``, then wait for the consumer's handler to confirm it,
        and return what the handler returned (Akka's
        ``MessageWithConfirmation``, with the reply).

        Args:
            message: the message.
            timeout: seconds to wait for the confirmation (None: no limit);
                checked before anything is accepted.

        Raises:
            TimeoutError: no confirmation within ``timeout`` seconds (the
                message is still delivered).
            TypeError, ValueError: ``timeout`` is not a number of seconds
                > 0 (nothing accepted).
            ProducerFailed, ProducerStopped, ProducerSystemExited: as
                ``send``, also while it waits for the confirmation (the
                message may still be delivered: a controller started again
                on its durable queue resends it).
            TypeError: as ``send``.
        """
        seconds = None if timeout is None else check_seconds("timeout", timeout)
        pending = await self._accept(message, True)
        assert pending.done is not None
        await self._wait(pending.done, seconds)
        if pending.seq_nr > self.channel.confirmed:
            raise self._error()  # released unconfirmed: the controller ended
        reply = pending.reply if pending.has_reply else None
        if isinstance(reply, BaseException):
            raise reply
        return reply

    async def _accept(self, message: object, wants_reply: bool) -> Pending:
        channel = self.channel
        self._accepting += 1
        try:
            async with self._lock:
                while True:
                    self._check()
                    if channel.demand > 0:
                        break
                    await channel.wait_changed()
                queue = self.queue
                encoded = None if queue is None else queue.encode(message)
                pending = channel.reserve(message, wants_reply)
                self._accepted += 1
        finally:
            self._accepting -= 1
        if queue is not None:
            assert encoded is not None
            await self._store(queue, pending.seq_nr, encoded)
        channel.ready(pending)
        return pending

    async def wait_confirmed(self, seq_nr: int | None = None) -> None:
        """Return once message ``seq_nr`` (None: every message accepted so
        far) is confirmed; at once when it is already.

        Raises:
            TypeError: ``seq_nr`` is not an int (nor None).
            ValueError: ``seq_nr`` is negative, or beyond the highest number
                accepted so far (it would never be confirmed); the error
                names that number.
            ProducerFailed, ProducerStopped: the controller failed or was
                stopped before ``seq_nr`` was confirmed.
            ProducerSystemExited: the system has exited.
        """
        channel = self.channel
        highest = channel.next_seq_nr - 1
        target = highest if seq_nr is None else check_seq_nr("seq_nr", seq_nr, highest)
        if not self.system.running:
            raise self._error()
        while channel.confirmed < target:
            self._check()
            await channel.wait_changed()

    def statistics(self) -> ProducerStatistics:
        """The counts so far."""
        channel = self.channel
        return ProducerStatistics(
            self._accepted,
            channel.confirmed,
            len(channel.unconfirmed),
            channel.demand,
            channel.resent,
            channel.lost_sends,
            channel.bad_input,
        )

    def _release(self) -> None:
        self.channel.release()

    def __repr__(self) -> str:
        return (
            f"ProducerController({self.producer_id!r}, "
            f"confirmed={self.channel.confirmed}, next={self.channel.next_seq_nr})"
        )
