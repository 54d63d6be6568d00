"""``ConsumerController``: the receiving side of reliable delivery, in front
of one consumer actor (as Akka's ``ConsumerController``).

Its actor takes ``Hello`` and ``Sequenced`` messages from any number of
producers, local or remote, and hands each message to the consumer as a
[``Delivery``][actors.delivery.Delivery], in order per producer; the
consumer's return confirms it. A consumer actor of the controller's own
system gets each batch at once, in its mailbox (``_handover``: several
batches in flight, no ask per message; a failure at message n skips what
was handed over after it and hands everything from n on over again, in
order); a remote consumer, a pool, or a controller with a
``delivery_timeout`` is asked once per message, one at a time. Per producer
id it keeps the numbering (epoch) and the highest number handed over, so
that:

* a message at or below it is a duplicate (the wire delivered it twice, or
  the producer resent it after a lost confirmation): dropped, counted, and
  answered with the current confirmation;
* a message past the next number is out of order (one before it was lost):
  dropped, and a ``Resend`` asks for the missing ones (once per gap);
* a message past the demand it gave is dropped and counted (``bad_input``);
* a work queue's job it ran lately (the last 4096 job ids) is confirmed
  without running it again: a queue that handed it out again to the same
  worker (it thought the worker lost) does not make it run twice.

Producers send batches (one ``Sequenced`` holds up to ``MAX_BATCH``
consecutive messages); a batch is checked as a whole (its numbers, its
length, within the demand) and handed over message by message, so a batch
that overlaps what was handled has its seen part dropped as duplicates.

Demand: it asks each producer for ``window`` messages past the confirmed
one, and tells it again (a ``Request``) when half of that was confirmed
(within a batch too, so the producer sends the next half meanwhile), or 5
ms after a confirmation otherwise, so confirmations are batched under load
and reported promptly when idle. The state lives in the handle, not in the
actor, so a restart of the controller's actor keeps it. The per-producer table holds at
most ``max_producers`` entries; a new producer beyond that is refused
(counted), never let in by evicting one.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import anyio

from .. import (
    Actor,
    ActorContext,
    ActorRef,
    ActorStopped,
    ActorSystem,
    SystemNotRunning,
    Terminated,
)
from ..extension import host_of
from ..mailbox import MailboxClosed
from ._consumer_state import (
    FAILED,
    ConsumerState,
    ConsumerStatistics,
    Stream,
)
from ._delivery import Delivery
from ._handover import Batch, lane_for
from ._protocol import Hello, Register, Resend, Sequenced
from ._validation import (
    check_count,
    check_id,
    check_seconds,
    check_seq_nr,
    spawner_system,
)
from ._wire import is_remote, prepare

__all__ = ["ConsumerController", "ConsumerStatistics"]

#: The most seconds between two attempts at a failing handler.
_MAX_RETRY: Final = 10.0
#: Seconds between a confirmation and the Request that reports it, when
#: less than half a window is confirmed (confirmations are batched so).
_FLUSH_DELAY: Final = 0.005


class _ConsumerActor(Actor[Any]):
    """The consumer controller's actor (its state is the handle's)."""

    def __init__(self, state: ConsumerState) -> None:
        self.state = state

    def on_start(self) -> None:
        self.state.ref = self.context.self_ref
        if self.state.consumer is not None:
            self.context.watch(self.state.consumer)

    def on_stop(self) -> None:
        state = self.state
        if not self.context.self_ref.is_alive:  # its last stop, not a restart
            state.stopped = True
            if state.lane is not None:
                state.lane.close()
            progress = state.progress
            if progress is not None:  # every wait_confirmed wakes and raises
                state.progress = None
                progress.set()

    async def receive(self, message: object) -> None:
        state = self.state
        if type(message) is Sequenced:
            await self._sequenced(message)
        elif type(message) is Hello:
            stream = state.stream(
                message.producer_id, message.epoch, message.producer, message.confirmed
            )
            if stream is not None:
                self._prune(stream, message.confirmed)
                state.request(message.producer_id, stream)
        elif message is _FLUSH:
            due, state.grants_due = state.grants_due, {}
            for producer_id, stream in state.streams.items():
                if stream.confirmed > stream.reported or producer_id in due:
                    state.request(producer_id, stream)
            lane = state.lane
            if lane is not None and lane.inflight and not lane.failing:
                # Batches still in the consumer's hands: report them soon.
                self.context.timers.start_single("flush", _FLUSH, _FLUSH_DELAY)
        elif message is FAILED:
            delay = state.retry_delay
            state.retry_delay = min(delay * 2, _MAX_RETRY)
            self.context.timers.start_single("retry", _RETRY, delay)
        elif message is _RETRY:
            self._retry()
        elif isinstance(message, Terminated):
            if message.ref == state.consumer:
                self.context.stop()
        else:
            state.bad_input += 1

    def _retry(self) -> None:
        lane = self.state.lane
        if lane is None or not lane.failing:
            return
        try:
            lane.retry()
        except MailboxClosed:
            self.context.stop()  # the consumer stopped (its Terminated comes)
            return
        self._flush_soon()

    def _flush_soon(self) -> None:
        # A short timer: prompt when idle, one per burst.
        if not self.context.timers.is_active("flush"):
            self.context.timers.start_single("flush", _FLUSH, _FLUSH_DELAY)

    @staticmethod
    def _prune(stream: Stream, producer_confirmed: int) -> None:
        if stream.replies:
            stream.replies = [r for r in stream.replies if r[0] > producer_confirmed]

    async def _sequenced(self, message: Sequenced) -> None:
        state = self.state
        producer_id = message.producer_id
        stream = state.streams.get(producer_id)
        producer = message.producer
        if stream is None or stream.epoch != message.epoch:
            # A consumer that started again (or a producer's new numbering):
            # everything the producer says is confirmed was handled.
            if producer is None:
                # No ref to answer to: the producer's resend carries it.
                state.bad_input += 1
                return
            stream = state.stream(
                producer_id, message.epoch, producer, message.confirmed
            )
            if stream is None:
                return
        elif producer is not None:
            stream.producer = producer
        messages = message.messages
        count = message.count
        first = message.seq_nr
        job_ids = message.job_ids
        if (
            count == 0
            or first < 1
            or (messages is None and len(message.bodies) != count)
            # Message objects come only from a producer of this process: a
            # remote one's go through the codec (tags and bodies).
            or (messages is not None and not isinstance(messages, list))
            or (messages is not None and is_remote(stream.producer))
            or (job_ids and len(job_ids) != count)
        ):
            state.bad_input += 1
            return
        self._prune(stream, message.confirmed)
        accepted = stream.accepted
        if first + count - 1 <= accepted:
            # Seen already: the confirmation again (one grant for a burst of
            # duplicates, soon: they come in a resend's batches).
            state.duplicates += count
            state.grant(producer_id, stream)
            self._flush_soon()
            return
        if first > accepted + 1:
            state.out_of_order += count
            if stream.resend_for != accepted + 1:
                stream.resend_for = accepted + 1
                self._resend(producer_id, stream, accepted + 1)
            return
        skip = accepted + 1 - first
        state.duplicates += skip
        wants = set(message.wants_reply) if message.wants_reply else None
        deliveries, answered = self._unpack(message, stream, skip)
        if not deliveries:
            return
        lane = state.lane
        if lane is None:
            await self._handle(producer_id, stream, deliveries, answered, wants)
            return
        # A local consumer actor: the batch goes to its mailbox (_handover).
        stream.accepted = deliveries[-1].seq_nr
        try:
            lane.hand(Batch(stream, producer_id, deliveries, wants, answered))
        except MailboxClosed:
            self.context.stop()  # the consumer stopped (its Terminated comes)
            return
        self._flush_soon()

    def _unpack(
        self, message: Sequenced, stream: Stream, skip: int
    ) -> tuple[list[Delivery[Any]], dict[int, Any] | None]:
        """The deliveries of ``message`` from index ``skip`` on, and the
        replies of the jobs among them run here lately, by number (confirmed
        without running them again; None: none). A message past the demand
        this consumer gave, or one that does not decode, ends the batch
        there: it and the rest are dropped and counted (``bad_input``)."""
        state = self.state
        producer_id, epoch = message.producer_id, message.epoch
        first, count = message.seq_nr, message.count
        messages, tags, bodies = message.messages, message.tags, message.bodies
        job_ids = message.job_ids
        codec = state.codec() if messages is None else None
        recent = state.recent_jobs
        limit = stream.reported + state.window if stream.reported >= 0 else math.inf
        deliveries: list[Delivery[Any]] = []
        answered: dict[int, Any] | None = None
        for index in range(skip, count):
            seq_nr = first + index
            if seq_nr > limit:
                state.bad_input += count - index  # past the demand it was given
                break
            if codec is not None:
                try:
                    payload = codec.decode(tags[index], bodies[index])
                except Exception:
                    state.bad_input += count - index
                    break
            else:
                assert messages is not None
                payload = messages[index]
            job_id = job_ids[index] if job_ids else 0
            if job_id:
                job = (producer_id, job_id)
                if job in recent:  # run here already: confirm, do not run again
                    state.duplicates += 1
                    if answered is None:
                        answered = {}
                    answered[seq_nr] = recent[job]
            deliveries.append(
                Delivery(payload, producer_id, epoch, seq_nr, job_id or None)
            )
        return deliveries, answered

    async def _handle(
        self,
        producer_id: str,
        stream: Stream,
        deliveries: list[Delivery[Any]],
        answered: dict[int, Any] | None,
        wants: set[int] | None,
    ) -> None:
        """Hand ``deliveries`` over one at a time: the handler called inline
        (a sync one without a coroutine per message), or the consumer asked;
        each return confirms its message; a failure goes to the retrying
        path (``_hand_over``). The grants due go out before each yield."""
        state = self.state
        sync = state.handler if state.sync_handler else None
        consumer, timeout = state.consumer, state.delivery_timeout
        for delivery in deliveries:
            seq_nr = delivery.seq_nr
            if answered is not None and seq_nr in answered:
                reply = answered[seq_nr]  # run here already
            elif sync is not None:
                try:
                    reply = sync(delivery)
                except Exception:
                    state.handler_failures += 1
                    state.send_grants()
                    reply = await self._hand_over(delivery, True)
                else:
                    if reply is not None and inspect.isawaitable(reply):
                        state.sync_handler = False
                        sync = None
                        state.send_grants()
                        reply = await self._finish(delivery, reply)
            elif consumer is not None:
                # The consumer actor, asked inline (no coroutine of ours per
                # message); a failure goes to the retrying path.
                state.send_grants()
                try:
                    reply = await consumer.ask(delivery, timeout)
                except ActorStopped:
                    self.context.stop()
                    return
                except Exception:
                    state.handler_failures += 1
                    reply = await self._hand_over(delivery, True)
            else:
                state.send_grants()
                reply = await self._hand_over(delivery)
            if reply is _GONE:
                return
            stream.accepted = seq_nr
            state.settle(producer_id, stream, delivery, reply, wants)
        state.send_grants()
        progress = state.progress
        if progress is not None:
            state.progress = None
            progress.set()
        # The rest soon after (a short timer: prompt when idle, one per burst).
        if stream.confirmed > stream.reported:
            self._flush_soon()

    def _resend(self, producer_id: str, stream: Stream, from_seq_nr: int) -> None:
        state = self.state
        assert state.ref is not None
        # The producer's resend timer covers a lost Resend.
        with contextlib.suppress(Exception):
            stream.producer.tell(
                Resend(producer_id, stream.epoch, state.ref, from_seq_nr)
            )

    async def _finish(self, delivery: Delivery[Any], awaitable: Any) -> Any:
        """Await what an async handler returned for ``delivery`` (its first
        call), retrying as ``_hand_over`` when it fails."""
        try:
            with anyio.fail_after(self.state.delivery_timeout):
                return await awaitable
        except Exception:
            self.state.handler_failures += 1
        return await self._hand_over(delivery, True)

    async def _hand_over(self, delivery: Delivery[Any], failed: bool = False) -> Any:
        """Ask the consumer (or call the handler) until it succeeds;
        ``_GONE`` when the consumer stopped (the message stays unconfirmed).
        ``failed``: the first attempt failed already (wait, then retry)."""
        state = self.state
        delay = state.retry_interval
        handler, consumer = state.handler, state.consumer
        if failed:
            await anyio.sleep(delay)
            delay = min(delay * 2, _MAX_RETRY)
        while True:
            try:
                if handler is not None:
                    # In this actor's task: no ask, and a sync handler lets
                    # the controller drain its mailbox without yielding.
                    result = handler(delivery)
                    if inspect.isawaitable(result):
                        with anyio.fail_after(state.delivery_timeout):
                            result = await result
                    return result
                assert consumer is not None
                return await consumer.ask(delivery, state.delivery_timeout)
            except ActorStopped:
                if handler is None:
                    self.context.stop()
                    return _GONE
                state.handler_failures += 1
            except Exception:
                state.handler_failures += 1
            await anyio.sleep(delay)
            delay = min(delay * 2, _MAX_RETRY)


_GONE: Any = object()


class _Flush:
    """The timer that reports confirmations not reported yet."""

    __slots__ = ()


_FLUSH: Final = _Flush()


class _Retry:
    """The timer that hands the lane's unconfirmed batches over again."""

    __slots__ = ()


_RETRY: Final = _Retry()


class ConsumerController:
    """The receiving side of reliable delivery in front of ``consumer`` (as
    Akka's ``ConsumerController``): producers send to ``ref``, the consumer
    gets each message once as a [``Delivery``][actors.delivery.Delivery],
    and its handler's return confirms it.

    A consumer actor of the same system gets the messages of each batch in
    turn from its own mailbox (one runtime signal per batch, several in
    flight: no ask per message); its ``receive`` is called with each
    ``Delivery``, and must not stash one (its return confirms it). When it
    fails for message n (raises, returns an ``ErrorReply``, or does not
    handle it), the messages after n already handed over are neither run
    nor confirmed: after ``retry_interval`` seconds everything from n on is
    handed over again, in order (stop and redeliver, as Akka's consumer
    controller on a consumer restart), so each runs once and none before
    n. A consumer on another node or a pool, or any consumer with a
    ``delivery_timeout``, gets a ``Delivery`` ``ask`` per message, one at a
    time.

    Make it with [``spawn``][actors.delivery.ConsumerController.spawn]. Its
    actor stops when the consumer stops (it watches it).

    Attributes:
        ref: the controller's actor; give it to producers
            (``producer.register_consumer(controller.ref)``), or register it
            on the node for remote producers (``system.remote.register(name,
            controller.ref)``).
        consumer: the consumer actor (None with a handler).
    """

    def __init__(self, state: ConsumerState, ref: ActorRef[Any]) -> None:
        self._state = state
        self.ref = ref
        self.consumer = state.consumer

    @classmethod
    def spawn(
        cls,
        spawner: ActorSystem[Any] | ActorContext,
        consumer: ActorRef[Any] | None = None,
        *,
        handler: Callable[[Delivery[Any]], Any] | None = None,
        window: int = 256,
        delivery_timeout: float | None = None,
        retry_interval: float = 0.1,
        max_producers: int = 1024,
        name: str | None = None,
    ) -> ConsumerController:
        """Spawn a consumer controller for ``consumer`` (a child of
        ``spawner``: a system, or an actor's context).

        Args:
            spawner: where the controller's actor is spawned.
            consumer: the actor that handles the messages (``Delivery``
                messages; best local to the controller: then no ask per
                message).
            handler: instead of a consumer actor, a function of a
                ``Delivery`` (sync, or returning an awaitable) called in the
                controller's own actor: no ask per message, the fastest
                path. What it returns confirms the message; what it raises
                is retried as a consumer's failure.
            window: messages each producer may send past the confirmed one
                (the demand; >= 1). A ``Request`` goes back per half window:
                each costs a protocol message each way, so a larger window
                is fewer of them per message (at most 256 go in one batch).
            delivery_timeout: seconds a handler may take before the hand-over
                counts as failed and is retried (None: as long as it takes).
                With one, the consumer is asked per message (the ask carries
                the deadline).
            retry_interval: seconds before the first retry of a failed
                handler (doubling up to 10 s).
            max_producers: the most producer ids known at once.
            name: the controller actor's name.

        Raises:
            TypeError: ``consumer`` is not an ActorRef, ``handler`` not
                callable, neither or both are given, or a number is not one.
            ValueError: a count < 1 or seconds <= 0.
            actors.SystemNotRunning: the system is not running.
        """
        if (consumer is None) == (handler is None):
            raise TypeError("give a consumer actor or a handler (one of them)")
        if consumer is not None and not isinstance(consumer, ActorRef):
            raise TypeError(f"consumer must be an ActorRef, not {consumer!r}")
        if handler is not None and not callable(handler):
            raise TypeError(f"handler must be callable, not {handler!r}")
        system = spawner_system(spawner)
        prepare(system)
        state = ConsumerState(
            system,
            consumer,
            handler,
            check_count("window", window),
            math.inf
            if delivery_timeout is None
            else check_seconds("delivery_timeout", delivery_timeout),
            check_seconds("retry_interval", retry_interval),
            check_count("max_producers", max_producers),
        )
        if delivery_timeout is None:
            # A plain local consumer gets batches, not an ask per message;
            # with a timeout, each is asked (the ask carries the deadline).
            state.lane = lane_for(host_of(system), consumer, state)
        factory: Callable[[], _ConsumerActor] = partial(_ConsumerActor, state)
        ref = spawner.spawn(factory, name=name)
        state.ref = ref
        return cls(state, ref)

    def register_to(self, producer: ActorRef[Any]) -> None:
        """Ask ``producer`` (a producer controller's ``ref``, local or
        remote) to send to this controller from now on (Akka's
        ``RegisterToProducerController``): what a consumer that started
        again on a new node does.

        Raises:
            TypeError: ``producer`` is not an ActorRef.
            SystemNotRunning: the system has exited.
        """
        if not isinstance(producer, ActorRef):
            raise TypeError(f"producer must be an ActorRef, not {producer!r}")
        self._check_running()
        producer.tell(Register(self.ref))

    def _check_running(self) -> None:
        if not self._state.system.running:
            raise SystemNotRunning(
                f"consumer controller {self.ref.path}: its system has exited"
            )

    def confirmed(self, producer_id: str) -> int:
        """The highest number of ``producer_id`` handed over and confirmed in
        its current epoch (0: none)."""
        stream = self._state.streams.get(producer_id)
        return 0 if stream is None else stream.confirmed

    async def wait_confirmed(self, producer_id: str, seq_nr: int) -> None:
        """Return once message ``seq_nr`` of ``producer_id`` was handled (at
        once when it was; seq_nr 0 is always).

        Raises:
            TypeError: ``producer_id`` is not a str, or ``seq_nr`` not an int.
            ValueError: ``producer_id`` is empty or too long, or ``seq_nr``
                is negative.
            ActorStopped: the controller's actor stopped before it was
                handled (its consumer stopped, or it was stopped).
            SystemNotRunning: the system has exited.
        """
        check_id("producer_id", producer_id)
        check_seq_nr("seq_nr", seq_nr, seq_nr)
        state = self._state
        self._check_running()
        while self.confirmed(producer_id) < seq_nr:
            if state.stopped:
                self._check_running()
                raise ActorStopped(
                    f"consumer controller {self.ref.path} stopped before message "
                    f"{seq_nr} of {producer_id!r} was handled"
                )
            if state.progress is None:
                state.progress = anyio.Event()
            await state.progress.wait()

    def statistics(self) -> ConsumerStatistics:
        """The counts so far."""
        return self._state.statistics()

    def __repr__(self) -> str:
        return f"ConsumerController({self.ref!r}, consumer={self.consumer!r})"
