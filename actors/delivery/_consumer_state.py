"""A consumer controller's state (``ConsumerState``), kept in its handle
so that a restart of its actor keeps it: per producer id the numbering and
what was handed over and confirmed (``Stream``), the demand told back
(``Request``), the replies kept for the producers' asks, the job ids run
lately, the counts, and the lane's confirmations (``_handover``)."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import anyio
import msgspec

from .. import ActorRef, ActorSystem
from ._delivery import Delivery
from ._handover import Lane
from ._protocol import MAX_ID, Request
from ._wire import codec_of, is_remote

__all__ = ["FAILED", "RECENT_JOBS", "ConsumerState", "ConsumerStatistics", "Stream"]

#: The most job ids a worker remembers having run.
RECENT_JOBS: Final = 4096


@dataclass(frozen=True, slots=True)
class ConsumerStatistics:
    """What a consumer controller did (``controller.statistics()``).

    Attributes:
        delivered: messages handed over and confirmed.
        duplicates: messages dropped as seen already.
        out_of_order: messages dropped because one before them was missing.
        handler_failures: handler calls that raised (each retried).
        bad_input: messages dropped as invalid (past the demand, bad
            numbers, an unknown producer beyond ``max_producers``).
        producers: producer ids known.
    """

    delivered: int
    duplicates: int
    out_of_order: int
    handler_failures: int
    bad_input: int
    producers: int


class Stream:
    """What the consumer knows of one producer id."""

    __slots__ = (
        "accepted",
        "confirmed",
        "epoch",
        "producer",
        "replies",
        "reported",
        "resend_for",
    )

    def __init__(self, epoch: str, producer: ActorRef[Any], confirmed: int) -> None:
        self.epoch = epoch
        self.producer = producer
        self.confirmed = confirmed
        #: The highest number taken for handling (handed over to the
        #: consumer, maybe not confirmed yet): duplicates and gaps are
        #: judged by it.
        self.accepted = confirmed
        #: The confirmation last told to the producer.
        self.reported = -1
        #: The gap a Resend was sent for (one per gap).
        self.resend_for = -1
        #: Replies the producer may not have: (seq_nr, value) or
        #: (seq_nr, tag, body), kept until its ``confirmed`` passes them.
        self.replies: list[tuple[Any, ...]] = []


class ConsumerState:
    """A consumer controller's state (kept across restarts of its actor)."""

    def __init__(
        self,
        system: ActorSystem[Any],
        consumer: ActorRef[Any] | None,
        handler: Callable[[Delivery[Any]], Any] | None,
        window: int,
        delivery_timeout: float,
        retry_interval: float,
        max_producers: int,
    ) -> None:
        self.system = system
        self.consumer = consumer
        self.handler = handler
        self.window = window
        self.delivery_timeout = delivery_timeout
        self.retry_interval = retry_interval
        self.max_producers = max_producers
        self.streams: dict[str, Stream] = {}
        self.ref: ActorRef[Any] | None = None
        self.delivered = 0
        self.duplicates = 0
        self.out_of_order = 0
        self.handler_failures = 0
        self.bad_input = 0
        self.half_window = max(1, window // 2)
        #: The handler has returned no awaitable so far: called inline.
        self.sync_handler = handler is not None
        #: Set at the next confirmation (made when someone waits for one).
        self.progress: anyio.Event | None = None
        #: Its actor has stopped for good (not a restart): nothing more is
        #: confirmed.
        self.stopped = False
        #: (producer id, job id) -> reply of the jobs run lately, oldest
        #: first, at most ``RECENT_JOBS``: a job handed out again to this
        #: worker (its queue thought it lost) is not run again.
        self.recent_jobs: OrderedDict[tuple[str, int], Any] = OrderedDict()
        #: The batches in flight to a local consumer actor (None: the
        #: consumer is asked per message, or a handler is called).
        self.lane: Lane | None = None
        #: Seconds before the next retry of a failed hand-over on the lane.
        self.retry_delay = retry_interval
        #: Producer id -> stream whose grant (a ``Request``) is due: sent
        #: once by ``send_grants``, however many confirmations made it due
        #: in between (one grant per batch, or before the handler yields).
        self.grants_due: dict[str, Stream] = {}
        self._codec: Any = None

    def codec(self) -> Any:
        """The node's codec (delivery messages registered), looked up once.

        Raises:
            RuntimeError: the system is not a node.
        """
        codec = self._codec
        if codec is None:
            codec = self._codec = codec_of(self.system)
        return codec

    def stream(
        self, producer_id: str, epoch: str, producer: ActorRef[Any], confirmed: int
    ) -> Stream | None:
        """The stream of ``producer_id``, made (or started afresh for a new
        epoch) at ``confirmed``; None when the table is full."""
        if not (0 < len(producer_id) <= MAX_ID and 0 < len(epoch) <= MAX_ID):
            self.bad_input += 1
            return None
        stream = self.streams.get(producer_id)
        if stream is None:
            if len(self.streams) >= self.max_producers:
                self.bad_input += 1
                return None
            stream = self.streams[producer_id] = Stream(epoch, producer, confirmed)
        elif stream.epoch != epoch:
            stream = self.streams[producer_id] = Stream(epoch, producer, confirmed)
        else:
            stream.producer = producer
            stream.confirmed = max(stream.confirmed, confirmed)
            stream.accepted = max(stream.accepted, stream.confirmed)
        return stream

    def grant(self, producer_id: str, stream: Stream) -> None:
        """A grant to ``producer_id`` is due: ``send_grants`` sends it (one
        ``Request`` with the confirmation and demand as they are then)."""
        self.grants_due[producer_id] = stream

    def send_grants(self) -> None:
        """Send every grant due, one ``Request`` per producer (called at the
        end of a batch, before a handler yields, and by the flush timer)."""
        due = self.grants_due
        if due:
            self.grants_due = {}
            for producer_id, stream in due.items():
                if self.streams.get(producer_id) is stream:  # not replaced since
                    self.request(producer_id, stream)

    def request(self, producer_id: str, stream: Stream) -> None:
        """Tell the producer the confirmation and the demand now."""
        assert self.ref is not None
        stream.reported = stream.confirmed
        remote: list[tuple[int, str, msgspec.Raw]] = []
        local: list[tuple[int, Any]] | None = None
        if stream.replies:
            if is_remote(stream.producer):
                remote = [r for r in stream.replies if len(r) == 3]
            else:
                local = [r for r in stream.replies if len(r) == 2]
        message = Request(
            producer_id,
            stream.epoch,
            self.ref,
            stream.confirmed,
            stream.confirmed + self.window,
            remote,
            local,
        )
        # Lost like any message if it fails: the producer's timer asks again.
        with contextlib.suppress(Exception):
            stream.producer.tell(message)

    def settle(
        self,
        producer_id: str,
        stream: Stream,
        delivery: Delivery[Any],
        reply: object,
        wants: set[int] | None,
    ) -> None:
        """``delivery`` was handled (its handler returned ``reply``; the lane
        calls it in the consumer's task): confirm it, remember its job, keep
        the reply its producer waits for (``wants``), and make a grant due
        per half window confirmed."""
        seq_nr, job_id = delivery.seq_nr, delivery.job_id
        if job_id is not None:
            recent = self.recent_jobs
            recent[(producer_id, job_id)] = reply
            if len(recent) > RECENT_JOBS:
                recent.popitem(last=False)
        stream.confirmed = seq_nr
        self.delivered += 1
        if wants is not None and seq_nr in wants:
            self.keep_reply(stream, seq_nr, reply)
        # A grant when half the window is confirmed: sent at the end of the
        # batch, or before the handler yields (the producer sends the next
        # half meanwhile), one Request however many halves.
        if seq_nr - stream.reported >= self.half_window:
            self.grants_due[producer_id] = stream

    def yielding(self) -> None:
        """The lane's: the handler is about to yield (it returned an
        awaitable): the grants due go out first."""
        if self.grants_due:
            self.send_grants()

    def progressed(self) -> None:
        """The lane's: a batch is confirmed to its end."""
        if self.grants_due:
            self.send_grants()
        self.retry_delay = self.retry_interval
        progress = self.progress
        if progress is not None:
            self.progress = None
            progress.set()

    def failed(self) -> None:
        """The lane's: a hand-over failed; the controller retries it."""
        if self.grants_due:  # what was confirmed before it
            self.send_grants()
        self.handler_failures += 1
        ref = self.ref
        if ref is not None:
            # Lost only when the controller stopped (nothing to retry then).
            with contextlib.suppress(Exception):
                ref.tell(FAILED)

    def keep_reply(self, stream: Stream, seq_nr: int, value: object) -> None:
        if not is_remote(stream.producer):
            stream.replies.append((seq_nr, value))
            return
        codec = self.codec()
        if isinstance(value, BaseException):
            tag, body = codec.encode_error(value)
        else:
            try:
                tag, body = codec.encode(value)
            except TypeError as exc:
                tag, body = codec.encode_error(exc)
        stream.replies.append((seq_nr, tag, msgspec.Raw(body)))

    def statistics(self) -> ConsumerStatistics:
        return ConsumerStatistics(
            self.delivered,
            self.duplicates,
            self.out_of_order,
            self.handler_failures,
            self.bad_input,
            len(self.streams),
        )


class _Failed:
    """From the lane to the controller's actor: a hand-over failed (start
    the retry timer)."""

    __slots__ = ()


FAILED: Final = _Failed()
