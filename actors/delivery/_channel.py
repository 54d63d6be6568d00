"""One producer-to-consumer stream's sending side: numbering, the
unconfirmed messages, the demand, and resending (as Akka's
``ProducerController``; see ``_protocol`` for the messages).

The rules, each one line below:

* a message gets the next sequence number when it is accepted; it goes out
  only once it is *ready* (stored, for a durable producer) and within the
  demand (``up_to``), in order;
* what is ready goes out in batches (one ``Sequenced`` of up to
  ``MAX_BATCH`` messages, ``BATCH_BYTES`` of bodies): ``ready`` only
  schedules a flush in the endpoint actor (one local tell per batch), so a
  producer that accepts many messages without yielding sends them as one;
* the producer's ref goes in the first batch after the consumer answered,
  and in resends, not in every message (the consumer has it from ``Hello``);
* it stays unconfirmed until a ``Request`` confirms it (a confirmation of
  ``n`` confirms everything up to ``n``);
* the demand is what the consumer asked for, never more than
  ``max_unconfirmed`` past the confirmed number (a consumer cannot make the
  producer hold more than that);
* unconfirmed messages go out again when no confirmation came for
  ``resend_interval`` seconds, when the consumer asks (``Resend``), and to a
  newly registered consumer (one that started again);
* ``Hello`` goes out when a consumer is registered and again at each tick
  while the consumer has not answered, or nothing is unconfirmed and the
  demand is used up (a lost ``Request`` must not stall the stream).

Nothing from the consumer is believed blindly: a ``Request`` or ``Resend`` of
another consumer, producer or epoch, or one that confirms a number never
sent, is dropped and counted (``bad_input``).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

import anyio
import msgspec

from .. import ActorRef, ActorSystem
from ._protocol import MAX_BATCH, Hello, Request, Resend, Sequenced
from ._wire import codec_of, decode_payload, is_remote

__all__ = ["BATCH_BYTES", "Channel", "FlushDue", "Pending"]

_NO_REPLY: Any = object()
_EMPTY: Final = msgspec.Raw(b"")

#: The most bytes of message bodies in one batch to a remote consumer (a
#: larger message goes alone).
BATCH_BYTES: Final = 64 * 1024


class FlushDue:
    """The local message that has an endpoint actor send what its channel
    holds ready (``channel.run_flush()``): one per channel, told once per
    batch."""

    __slots__ = ("channel",)

    def __init__(self, channel: Channel) -> None:
        self.channel = channel


class Pending:
    """An accepted, unconfirmed message."""

    __slots__ = (
        "body",
        "done",
        "job_id",
        "message",
        "ready",
        "reply",
        "seq_nr",
        "tag",
        "wants_reply",
    )

    def __init__(
        self, seq_nr: int, message: object, wants_reply: bool, job_id: int = 0
    ) -> None:
        self.seq_nr = seq_nr
        self.job_id = job_id
        self.message = message
        self.wants_reply = wants_reply
        self.ready = False
        self.tag = ""
        self.body = _EMPTY
        #: Set when it is confirmed (``reply`` holds the handler's value then).
        self.done: anyio.Event | None = anyio.Event() if wants_reply else None
        self.reply: Any = _NO_REPLY

    @property
    def has_reply(self) -> bool:
        """Whether the consumer's reply arrived (it may be None)."""
        return self.reply is not _NO_REPLY


class Channel:
    """The sending state of producer ``producer_id`` (numbering ``epoch``) to
    its current consumer. Not thread-safe: used from one event loop (the
    producer's handle and its endpoint actor).

    Args:
        system: the producer's system (its codec, for a remote consumer).
        producer_id: the producer's id.
        epoch: the numbering's name.
        next_seq_nr: the number the next accepted message gets.
        confirmed: the highest confirmed number.
        max_unconfirmed: the most accepted, unconfirmed messages.
        resend_interval: seconds without a confirmation before the
            unconfirmed messages go out again.
    """

    def __init__(
        self,
        system: ActorSystem[Any],
        producer_id: str,
        epoch: str,
        *,
        next_seq_nr: int = 1,
        confirmed: int = 0,
        max_unconfirmed: int,
        resend_interval: float,
    ) -> None:
        self.system = system
        self.producer_id = producer_id
        self.epoch = epoch
        self.next_seq_nr = next_seq_nr
        self.confirmed = confirmed
        self.max_unconfirmed = max_unconfirmed
        self.resend_interval = resend_interval
        self.unconfirmed: deque[Pending] = deque()
        #: Where the consumer's answers go (the endpoint actor's ref).
        self.endpoint: ActorRef[Any] | None = None
        self.consumer: ActorRef[Any] | None = None
        self._remote = False
        #: The node's codec when the consumer is remote.
        self._codec: Any = None
        #: The next batch carries the producer's ref (the consumer answered).
        self._introduce = False
        #: A ``FlushDue`` is on its way to the endpoint.
        self.flush_due = False
        self.flush_message = FlushDue(self)
        #: The highest number the consumer asked for.
        self.up_to = confirmed
        #: The highest number sent (in order) to the current consumer.
        self.sent_up_to = confirmed
        self.answered = False
        self.last_progress = 0.0
        self._changed = anyio.Event()
        self.resent = 0
        self.lost_sends = 0
        self.bad_input = 0

    # -- the producer's side -------------------------------------------------

    @property
    def demand(self) -> int:
        """How many more messages may be accepted now (0 without a consumer)."""
        if self.consumer is None:
            return 0
        return max(0, self.up_to - (self.next_seq_nr - 1))

    async def wait_demand(self) -> None:
        """Return once ``demand`` > 0 (a checkpoint either way)."""
        await anyio.lowlevel.checkpoint()
        while self.demand <= 0:
            await self._changed.wait()

    async def wait_changed(self) -> None:
        """Return at the next confirmation, demand or consumer change."""
        await self._changed.wait()

    def wake(self) -> None:
        """Wake every task in ``wait_changed``."""
        self._changed.set()
        self._changed = anyio.Event()

    def reserve(
        self, message: object, wants_reply: bool = False, job_id: int = 0
    ) -> Pending:
        """Number ``message`` and hold it, not ready yet (``job_id``: a work
        queue's job).

        Raises:
            TypeError: the consumer is remote and the node's codec cannot
                encode ``message`` (nothing is numbered then).
        """
        pending = Pending(self.next_seq_nr, message, wants_reply, job_id)
        if self._remote:
            tag, body = self._codec.encode(message)
            pending.tag, pending.body = tag, msgspec.Raw(body)
        self.next_seq_nr += 1
        self.unconfirmed.append(pending)
        return pending

    def restore(self, seq_nr: int, message: object) -> None:
        """Hold a message recovered from a durable queue (ready at once)."""
        pending = Pending(seq_nr, message, False)
        pending.ready = True
        self.unconfirmed.append(pending)
        self.next_seq_nr = max(self.next_seq_nr, seq_nr + 1)

    def ready(self, pending: Pending) -> None:
        """``pending`` may go out (it is stored): schedule a flush when it is
        within the demand (``run_flush`` sends it, in a batch)."""
        pending.ready = True
        if (
            not self.flush_due
            and pending.seq_nr <= self.up_to
            and self.answered
            and self.consumer is not None
        ):
            endpoint = self.endpoint
            if endpoint is None:
                self.flush()
                return
            self.flush_due = True
            try:
                endpoint.tell(self.flush_message)
            except Exception:
                # The endpoint is gone (the controller stopped): send now.
                self.flush_due = False
                self.flush()

    def run_flush(self) -> None:
        """The endpoint's ``FlushDue``: send what is ready."""
        self.flush_due = False
        self.flush()

    def flush(self, introduce: bool = False) -> None:
        """Send the ready messages past ``sent_up_to`` within the demand, in
        order (stopping at the first one not ready), in batches;
        ``introduce``: with the producer's ref (a resend)."""
        consumer = self.consumer
        if consumer is None or not self.answered:
            return
        batch: list[Pending] = []
        size = 0
        up_to, remote = self.up_to, self._remote
        for pending in self.unconfirmed:
            seq_nr = pending.seq_nr
            if seq_nr <= self.sent_up_to:
                continue
            if seq_nr > up_to or not pending.ready:
                break
            if remote:
                if not pending.tag and not self._encode(pending):
                    break  # it stays unconfirmed (counted), never skipped
                length = len(pending.body)
                if batch and (size + length > BATCH_BYTES or len(batch) >= MAX_BATCH):
                    self._send_batch(consumer, batch, introduce)
                    introduce = False
                    batch, size = [], 0
                size += length
            elif len(batch) >= MAX_BATCH:
                self._send_batch(consumer, batch, introduce)
                introduce = False
                batch = []
            batch.append(pending)
            self.sent_up_to = seq_nr
        if batch:
            self._send_batch(consumer, batch, introduce)

    def _encode(self, pending: Pending) -> bool:
        try:
            tag, body = self._codec.encode(pending.message)
        except TypeError:
            # Accepted before a remote consumer was registered, and its type
            # is unknown to the node's codec.
            self.lost_sends += 1
            return False
        pending.tag, pending.body = tag, msgspec.Raw(body)
        return True

    def _send_batch(
        self, consumer: ActorRef[Any], batch: list[Pending], introduce: bool
    ) -> None:
        endpoint = self.endpoint
        assert endpoint is not None
        introduce = introduce or self._introduce
        self._introduce = False
        wants = [p.seq_nr for p in batch if p.wants_reply]
        job_ids = [p.job_id for p in batch] if batch[0].job_id else []
        if self._remote:
            message = Sequenced(
                self.producer_id,
                self.epoch,
                batch[0].seq_nr,
                self.confirmed,
                endpoint if introduce else None,
                [p.tag for p in batch],
                [p.body for p in batch],
                None,
                wants,
                job_ids,
            )
        else:
            message = Sequenced(
                self.producer_id,
                self.epoch,
                batch[0].seq_nr,
                self.confirmed,
                endpoint if introduce else None,
                messages=[p.message for p in batch],
                wants_reply=wants,
                job_ids=job_ids,
            )
        self._tell(consumer, message)

    def _tell(self, consumer: ActorRef[Any], message: object) -> None:
        # At-least-once: a tell that fails (a full buffer, a node gone) is a
        # lost message like any other; the resend timer covers it.
        try:
            consumer.tell(message)
        except Exception:
            self.lost_sends += 1

    # -- the consumer's side -------------------------------------------------

    def attach(self, consumer: ActorRef[Any]) -> None:
        """Send to ``consumer`` from now on: ``Hello``, then (once it answers)
        every unconfirmed message again."""
        if consumer == self.consumer and self.answered:
            return
        self.consumer = consumer
        self._remote = is_remote(consumer)
        self._codec = codec_of(self.system) if self._remote else None
        self.answered = False
        self.up_to = self.confirmed
        self.sent_up_to = self.confirmed
        self.hello()
        self.wake()

    def hello(self) -> None:
        """Tell the consumer who this producer is."""
        consumer, endpoint = self.consumer, self.endpoint
        if consumer is not None and endpoint is not None:
            self._tell(
                consumer, Hello(self.producer_id, self.epoch, endpoint, self.confirmed)
            )

    def _ours(self, producer_id: str, epoch: str, consumer: ActorRef[Any]) -> bool:
        if (
            producer_id == self.producer_id
            and epoch == self.epoch
            and consumer == self.consumer
        ):
            return True
        self.bad_input += 1
        return False

    def on_request(self, request: Request) -> list[Pending]:
        """Apply a confirmation and demand; return the newly confirmed."""
        if not self._ours(request.producer_id, request.epoch, request.consumer):
            return []
        confirmed, up_to = request.confirmed, request.up_to
        if not (0 <= confirmed < self.next_seq_nr and up_to >= confirmed):
            self.bad_input += 1
            return []
        done: list[Pending] = []
        unconfirmed = self.unconfirmed
        while unconfirmed and unconfirmed[0].seq_nr <= confirmed:
            done.append(unconfirmed.popleft())
        if confirmed > self.confirmed:
            self.confirmed = confirmed
            self.last_progress = anyio.current_time()
        if done:
            self._replies(request, done)
        if not self.answered:
            # A consumer that (re)started: everything unconfirmed again.
            self.answered = True
            self._introduce = True
            self.last_progress = anyio.current_time()
            self.sent_up_to = self.confirmed
        self.sent_up_to = max(self.sent_up_to, self.confirmed)
        self.up_to = max(self.up_to, min(up_to, self.confirmed + self.max_unconfirmed))
        self.flush()
        for pending in done:
            if pending.done is not None:
                pending.done.set()
        self.wake()
        return done

    def _replies(self, request: Request, done: list[Pending]) -> None:
        wanted = {p.seq_nr: p for p in done if p.wants_reply}
        if not wanted:
            return
        if request.local_replies is not None:
            for seq_nr, value in request.local_replies:
                pending = wanted.get(seq_nr)
                if pending is not None:
                    pending.reply = value
        for seq_nr, tag, body in request.replies:
            pending = wanted.get(seq_nr)
            if pending is None:
                continue
            try:
                pending.reply = decode_payload(self.system, tag, body)
            except Exception as exc:
                pending.reply = exc

    def on_resend(self, resend: Resend) -> None:
        """Send again from ``resend.from_seq_nr`` (a gap at the consumer)."""
        if not self._ours(resend.producer_id, resend.epoch, resend.consumer):
            return
        if not self.confirmed < resend.from_seq_nr <= self.sent_up_to + 1:
            return  # confirmed already, or not sent yet: nothing to resend
        before = self.sent_up_to
        self.sent_up_to = resend.from_seq_nr - 1
        self.flush(True)
        self.resent += max(0, self.sent_up_to - resend.from_seq_nr + 1)
        self.sent_up_to = max(self.sent_up_to, min(before, self.sent_up_to))

    def tick(self) -> None:
        """The resend timer: ``Hello`` or the unconfirmed messages again."""
        if self.consumer is None:
            return
        if not self.answered or (not self.unconfirmed and self.demand == 0):
            self.hello()
            return
        now = anyio.current_time()
        if self.unconfirmed and now - self.last_progress >= self.resend_interval:
            before = self.sent_up_to
            self.sent_up_to = self.confirmed
            self.flush(True)
            self.resent += self.sent_up_to - self.confirmed
            self.sent_up_to = max(self.sent_up_to, before)
            self.last_progress = now
