"""Handing messages to a local consumer actor in batches: no ask per message.

A consumer controller whose consumer is a plain actor of its own system
(and whose ``delivery_timeout`` is None) does not ask the consumer once per
message. It puts each accepted ``Sequenced`` batch into the consumer's
mailbox as one runtime signal (a ``Handover``), in FIFO order with the
consumer's other mail and outside its quota (the producers' demand bounds
what is in flight: at most ``window`` messages per producer). When the
signal reaches the front, the consumer's own task calls its ``receive`` with
each [``Delivery``][actors.delivery.Delivery] in turn, and each return
confirms that message at once (the ``Sink``: numbering, replies, demand), in
the consumer's task; the controller's task is not woken per message. So
several batches can be in flight to the consumer, as in Akka's
``ConsumerController`` with a window of unconfirmed deliveries.

Order on failure (stop and redeliver from the failed message, as Akka's
consumer controller does when its consumer restarts): when ``receive`` raises
for message ``n`` (or returns an ``ErrorReply``, or does not handle it), the
rest of its batch is not handed over, the *generation* of the lane goes up,
so every batch already queued in the mailbox is skipped when it reaches the
front (not run, not confirmed), and the controller hands everything from
``n`` on over again, in order, after its retry delay. A message after ``n``
therefore never runs, nor is confirmed, before ``n`` has succeeded, and runs
once. The consumer's failure itself goes to its supervisor as any handler's
does (the ``Delivery`` is the failed message, counted as a dead letter
``"handler failed"``).

A consumer must not stash a ``Delivery`` on this path: its return confirms
it (stash it, and it is confirmed unhandled).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final, Protocol

from .. import ActorRef, ErrorReply
from ..extension import UNHANDLED, RemoteHost
from ..mailbox import Signal
from ._delivery import Delivery

__all__ = ["Batch", "Handover", "Lane", "Sink", "lane_for"]

#: Result classes never awaited (the classes of most replies): a set lookup
#: per message instead of a ``hasattr(..., "__await__")``.
_PLAIN: Final[set[type]] = {type(None), bool, int, float, str, bytes, tuple, list}
_PLAIN_MAX: Final = 1024


class Sink(Protocol):
    """What a lane reports to (the consumer controller's state)."""

    def settle(
        self,
        producer_id: str,
        stream: Any,
        delivery: Delivery[Any],
        reply: object,
        wants: set[int] | None,
    ) -> None:
        """``delivery`` (of ``producer_id``'s ``stream``) was handled:
        ``reply`` confirms it; ``wants``: the numbers whose reply is kept."""
        ...

    def yielding(self) -> None:
        """The handler returned an awaitable: it is about to yield."""
        ...

    def progressed(self) -> None:
        """A batch is confirmed to its end."""
        ...

    def failed(self) -> None:
        """A hand-over failed: retry from the first unconfirmed message."""
        ...


class Batch:
    """The messages of one ``Sequenced``, as handed to the consumer.

    Attributes:
        stream: the producer's stream (the controller's ``_Stream``).
        producer_id: the producer's id.
        deliveries: the messages, in order.
        done: how many of them are confirmed.
        wants: the numbers whose producer waits for the reply (None: none).
        answered: replies of jobs run here before, by number (confirmed
            without running them again; None: none).
    """

    __slots__ = ("answered", "deliveries", "done", "producer_id", "stream", "wants")

    def __init__(
        self,
        stream: Any,
        producer_id: str,
        deliveries: list[Delivery[Any]],
        wants: set[int] | None,
        answered: dict[int, Any] | None,
    ) -> None:
        self.stream = stream
        self.producer_id = producer_id
        self.deliveries = deliveries
        self.done = 0
        self.wants = wants
        self.answered = answered


class Lane:
    """The batches in flight to one local consumer actor, in order.

    Args:
        host: the system's host (it puts signals in the consumer's mailbox).
        consumer: the consumer actor (``host.takes_signals(consumer)``).
        sink: where confirmations and failures go.
    """

    def __init__(self, host: RemoteHost, consumer: ActorRef[Any], sink: Sink) -> None:
        self.host = host
        self.consumer = consumer
        self.sink = sink
        #: Handed over (or held while failing), not confirmed to their end.
        self.inflight: deque[Batch] = deque()
        #: Signals of an older generation are skipped (a failure before them).
        self.generation = 0
        #: A hand-over failed: new batches wait for the retry.
        self.failing = False

    def hand(self, batch: Batch) -> None:
        """Hand ``batch`` over after what is in flight (held while failing).

        Raises:
            actors.mailbox.MailboxClosed: the consumer has stopped.
        """
        self.inflight.append(batch)
        if not self.failing:
            self.host.send_signal(self.consumer, Handover(self, batch))

    def retry(self) -> None:
        """Hand over again everything not confirmed, from the failed message
        on, in order.

        Raises:
            actors.mailbox.MailboxClosed: the consumer has stopped.
        """
        self.failing = False
        send, consumer = self.host.send_signal, self.consumer
        for batch in self.inflight:
            send(consumer, Handover(self, batch))

    def fail(self) -> None:
        """The message at the front failed: skip every signal queued so far."""
        self.generation += 1
        self.failing = True
        self.sink.failed()

    def close(self) -> None:
        """The controller stopped: nothing queued is handed over any more."""
        self.generation += 1
        self.failing = True


class Handover(Signal):
    """One batch in the consumer's mailbox (see the module's documentation).

    ``message`` is the delivery being handled (what a failure reports).
    """

    __slots__ = ("batch", "generation", "lane", "message")

    def __init__(self, lane: Lane, batch: Batch) -> None:
        self.lane = lane
        self.batch = batch
        self.generation = lane.generation
        self.message: object = None

    async def deliver(self, cell: object, receive: Any) -> None:
        """Called by the consumer's task when the signal reaches the front of
        its mailbox: hand each delivery to ``receive`` and confirm it."""
        lane = self.lane
        if self.generation != lane.generation:
            return  # queued before a failure: handed over again since
        batch = self.batch
        sink = lane.sink
        settle = sink.settle
        producer_id, stream, wants = batch.producer_id, batch.stream, batch.wants
        deliveries, answered = batch.deliveries, batch.answered
        index, end = batch.done, len(batch.deliveries)
        plain = _PLAIN
        while index < end:
            delivery = deliveries[index]
            if answered is not None and delivery.seq_nr in answered:
                reply = answered[delivery.seq_nr]  # run here already
            else:
                self.message = delivery
                try:
                    reply = receive(delivery)
                    # Most replies are of a plain class: one set lookup.
                    if reply.__class__ not in plain and _awaitable(reply.__class__):
                        sink.yielding()  # the grants due go out first
                        reply = await reply
                except Exception:
                    lane.fail()
                    raise  # the consumer's failure, for its supervisor
                if reply.__class__ is ErrorReply or reply is UNHANDLED:
                    lane.fail()  # an answer that is not a success: retried
                    return
            index += 1
            batch.done = index
            settle(producer_id, stream, delivery, reply, wants)
        inflight = lane.inflight
        if inflight and inflight[0] is batch:
            inflight.popleft()
        sink.progressed()

    def undelivered(self, cell: object) -> None:
        """The consumer stopped before this reached the front: its messages
        not confirmed are dead letters (its controller stops too)."""
        lane = self.lane
        if self.generation != lane.generation:
            return
        batch = self.batch
        for delivery in batch.deliveries[batch.done :]:
            lane.host.dead_letter(lane.consumer, delivery, "actor stopped")


def _awaitable(cls: type) -> bool:
    if hasattr(cls, "__await__"):
        return True
    if len(_PLAIN) < _PLAIN_MAX:
        _PLAIN.add(cls)
    return False


def lane_for(
    host: RemoteHost | None, consumer: ActorRef[Any] | None, sink: Sink
) -> Lane | None:
    """A lane to ``consumer`` when it is a plain local actor of ``host``'s
    system, else None (a remote consumer, a pool: asked per message)."""
    if host is None or consumer is None or not host.takes_signals(consumer):
        return None
    return Lane(host, consumer, sink)
