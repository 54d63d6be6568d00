"""``WorkQueue``: jobs pulled by workers on any nodes, as Akka's
``WorkPullingProducerController`` (facts, not code), optionally durable on
a journal.

A job is accepted by ``send`` (or ``ask``): it gets the next job id, is
stored (with a durable queue) before the call returns, and waits in the
queue until a worker has demand. Each worker is a
[``ConsumerController``][actors.delivery.ConsumerController] that registered
to the queue's ``ref`` (``WorkerController`` does it, and again after the
queue's process started again); the queue keeps one point-to-point stream
(``_channel``: numbering, demand, resend) per worker, watches the worker,
and hands each job to the worker with the most demand. A job is done when
its worker's handler returned and the confirmation came back: then (with a
durable queue) a ``Done`` event is stored.

What runs again: a job runs again only when its completion was not known
to the queue when a process was lost. When a worker stops, or its node is
declared down, before its confirmation arrived, its unconfirmed jobs go to
other workers (a job whose handler ran there runs again); when the queue's
own process dies, a queue started again on the same journal hands every
stored job whose ``Done`` was not stored to the workers again (a job run
meanwhile runs again, unless it goes back to the worker that ran it: a
worker remembers the job ids it ran lately). Each job carries its
``job_id`` (``Delivery.job_id``) so a handler can make its effect
idempotent. ``tests/delivery/test_work_processes.py`` kills every process
of a queue and its workers, and the broker, and attributes each job run
again to one of these cases.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

import anyio

from .. import ActorContext, ActorRef, ActorSystem, Result, Terminated
from ._channel import Channel, FlushDue, Pending
from ._durable_queue import DurableProducerQueue
from ._protocol import Register, Request, Resend
from ._sending import TICK, Sender, SenderEndpoint
from ._validation import check_count, check_id, check_seconds, spawner_system
from ._wire import prepare

__all__ = ["WorkQueue", "WorkQueueStatistics"]

M = TypeVar("M")

_NO_REPLY: Any = object()


@dataclass(frozen=True, slots=True)
class WorkQueueStatistics:
    """What a work queue holds and did (``queue.statistics()``).

    Attributes:
        accepted: jobs accepted by this queue object (recovered ones not
            counted).
        done: jobs confirmed by a worker.
        waiting: jobs waiting for a worker.
        in_flight: jobs handed to a worker, not confirmed.
        workers: workers registered now.
        redispatched: jobs handed to another worker after theirs stopped.
        bad_input: worker messages dropped as invalid.
    """

    accepted: int
    done: int
    waiting: int
    in_flight: int
    workers: int
    redispatched: int
    bad_input: int


class _Job:
    __slots__ = ("done", "job_id", "message", "reply", "wants_reply")

    def __init__(self, job_id: int, message: object, wants_reply: bool) -> None:
        self.job_id = job_id
        self.message = message
        self.wants_reply = wants_reply
        self.done: anyio.Event | None = anyio.Event() if wants_reply else None
        self.reply: Any = _NO_REPLY


class _Endpoint(SenderEndpoint):
    """The work queue's actor: workers' registrations, answers and deaths."""

    owner: WorkQueue[Any]

    def on_start(self) -> None:
        owner = self.owner
        owner.ref = self.context.self_ref
        self.context.timers.start_periodic("resend", TICK, owner.resend_interval)
        for consumer in list(owner.workers):
            self.context.watch(consumer)
            owner.workers[consumer].endpoint = owner.ref
            owner.workers[consumer].hello()
        owner._done_writing = bool(owner._done_ids)  # a restart ended the last
        if owner._done_writing:
            self.context.run(owner.write_done)  # what it left

    def receive(self, message: object) -> None:
        owner = self.owner
        if type(message) is FlushDue:
            channel = message.channel
            if owner.workers.get(channel.consumer) is channel:  # type: ignore[arg-type]
                channel.run_flush()
        elif type(message) is Request:
            if owner.on_request(message):
                self.context.run(owner.write_done)
        elif type(message) is Result:
            message.value  # noqa: B018 (raises a failed write_done's error)
        elif message is TICK:
            for channel in owner.workers.values():
                channel.tick()
        elif type(message) is Resend:
            worker = owner.workers.get(message.consumer)
            if worker is None:
                owner.bad_input += 1
            else:
                worker.on_resend(message)
        elif type(message) is Register:
            if owner.add_worker(message.consumer):
                self.context.watch(message.consumer)
        elif isinstance(message, Terminated):
            owner.remove_worker(message.ref)
        else:
            owner.bad_input += 1


class WorkQueue(Sender, Generic[M]):
    """Jobs of type ``M`` pulled by workers on any nodes (as Akka's
    ``WorkPullingProducerController``): made by
    [``start``][actors.delivery.WorkQueue.start].

    ``send`` returns once the job is accepted (and stored, with a durable
    queue); ``ask`` once a worker's handler returned (its value). Jobs wait
    in the queue until a worker has demand (each worker's ``window``); at
    most ``capacity`` jobs are held (waiting or in flight), and ``send``
    waits for room. See the module documentation for when a job runs twice.

    Attributes:
        queue_id: the queue's id (the workers' producer id).
        ref: the queue's actor: workers register to it.
        durable: the durable queue, or None.
    """

    def __init__(
        self,
        system: ActorSystem[Any],
        queue_id: str,
        durable: DurableProducerQueue | None,
        capacity: int,
        max_workers: int,
        resend_interval: float,
    ) -> None:
        super().__init__(system, f"work queue {queue_id!r}")
        self.queue_id = queue_id
        self.durable = durable
        self.capacity = capacity
        self.max_workers = max_workers
        self.resend_interval = resend_interval
        self.workers: dict[ActorRef[Any], Channel] = {}
        self.jobs: dict[int, _Job] = {}
        self.waiting: deque[int] = deque()
        self.next_job_id = 1
        self.accepted = 0
        self.done = 0
        self.redispatched = 0
        self.bad_input = 0
        self._lock = anyio.Lock()
        self._changed = anyio.Event()
        #: Finished jobs whose Done event is not stored yet, in order.
        self._done_ids: list[int] = []
        #: A ``write_done`` runs, or was started (one at a time).
        self._done_writing = False

    @classmethod
    async def start(
        cls,
        spawner: ActorSystem[Any] | ActorContext,
        queue_id: str,
        *,
        durable: DurableProducerQueue | None = None,
        capacity: int = 4096,
        max_workers: int = 1024,
        resend_interval: float = 1.0,
        name: str | None = None,
    ) -> WorkQueue[Any]:
        """Make a work queue (recovering the durable queue's jobs that were
        not done) and spawn its actor as a child of ``spawner``.

        Args:
            spawner: a system, or an actor's context.
            queue_id: the queue's id (1-255 printable characters).
            durable: a durable queue: jobs stored before ``send`` returns,
                the ones not done handed out again after a restart.
            capacity: the most jobs held, waiting or in flight.
            max_workers: the most workers registered at once (more are
                refused and counted).
            resend_interval: seconds without a worker's confirmation before
                its unconfirmed jobs are sent to it again.
            name: the actor's name (register it on the node for workers of
                other nodes).

        Raises:
            TypeError, ValueError: a bad argument, naming it.
            actors.persistence.JournalError: the durable queue could not be
                read.
            actors.SystemNotRunning: the system is not running (nothing was
                done: a durable queue is not loaded).
        """
        queue_id = check_id("queue_id", queue_id)
        if durable is not None and not isinstance(durable, DurableProducerQueue):
            raise TypeError(f"durable must be a DurableProducerQueue, not {durable!r}")
        system = spawner_system(spawner)
        prepare(system)
        self = cls(
            system,
            queue_id,
            durable,
            check_count("capacity", capacity),
            check_count("max_workers", max_workers),
            check_seconds("resend_interval", resend_interval),
        )
        if durable is not None:
            loaded = await durable.load(queue_id)
            for job_id, message in loaded.unconfirmed:
                self.jobs[job_id] = _Job(job_id, message, False)
                self.waiting.append(job_id)
            self.next_job_id = loaded.next_seq_nr
        factory: Callable[[], _Endpoint] = partial(_Endpoint, self)
        self.ref = spawner.spawn(factory, name=name)
        return self

    # -- the producer's side -------------------------------------------------

    async def send(self, message: M) -> int:
        """Accept a job (stored first, with a durable queue); return its id.

        Waits while the queue holds ``capacity`` jobs. Cancellation: a send
        cancelled while it waits accepts nothing; one cancelled while the job
        is being stored may have stored it (it then runs).

        Raises:
            ProducerFailed: the durable queue failed (this or an earlier
                call, or while this one waited).
            ProducerStopped: the queue was stopped (``stop()``, or its actor
                stopped: its parent's or its system's stop), before or while
                this waited; also an ``ActorStopped``.
            ProducerSystemExited: the system has exited (also a
                ``SystemNotRunning``).
            actors.persistence.EventsRejected: the durable queue's codec
                cannot encode ``message`` (nothing accepted).
        """
        return (await self._accept(message, False)).job_id

    async def ask(self, message: M, timeout: float | None = None) -> Any:
        """As ``send``, then wait until a worker's handler returned; return
        its value (Akka's ``MessageWithConfirmation``, with the reply).

        Args:
            message: the job.
            timeout: seconds to wait for the result (None: no limit);
                checked before anything is accepted.

        Raises:
            TimeoutError: no result within ``timeout`` seconds (the job
                still runs).
            TypeError, ValueError: ``timeout`` is not a number of seconds
                > 0 (nothing accepted).
            ProducerFailed, ProducerStopped, ProducerSystemExited: as
                ``send``, also while it waits for the result (a stored job
                still runs once a queue is started again on its journal).
            EventsRejected: as ``send``.
        """
        seconds = None if timeout is None else check_seconds("timeout", timeout)
        job = await self._accept(message, True)
        assert job.done is not None
        await self._wait(job.done, seconds)
        if job.reply is _NO_REPLY:
            raise self._error()  # released, not done: the queue ended
        reply = None if job.reply is _NO_REPLY else job.reply
        if isinstance(reply, BaseException):
            raise reply
        return reply

    async def _accept(self, message: object, wants_reply: bool) -> _Job:
        if (
            not self._lock.locked()
            and len(self.jobs) < self.capacity
            and self.failed is None
            and self.system.running
        ):
            # Room, nobody waiting: no lock (its acquire yields, and a sender
            # that yields here misses the durable queue's next write).
            job, encoded = self._number(message, wants_reply)
        else:
            async with self._lock:
                while True:
                    self._check()
                    if len(self.jobs) < self.capacity:
                        break
                    await self._wait_changed()
                job, encoded = self._number(message, wants_reply)
        durable = self.durable
        if durable is not None:
            assert encoded is not None
            try:
                await self._store(durable, job.job_id, encoded)
            except BaseException:
                self.jobs.pop(job.job_id, None)  # not accepted
                raise
        self.waiting.append(job.job_id)
        self.dispatch()
        return job

    def _number(
        self, message: object, wants_reply: bool
    ) -> tuple[_Job, tuple[str, bytes] | None]:
        """Accept ``message`` as the next job, and what the durable queue
        stores of it (None without one).

        Raises:
            actors.persistence.EventsRejected: the codec cannot encode it.
        """
        durable = self.durable
        encoded = None if durable is None else durable.encode(message)
        job = _Job(self.next_job_id, message, wants_reply)
        self.next_job_id += 1
        self.jobs[job.job_id] = job
        self.accepted += 1
        return job, encoded

    async def _wait_changed(self) -> None:
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_done(self) -> None:
        """Return once every job accepted so far (and recovered) is done
        (with a durable queue: its ``Done`` event stored, so a queue started
        again on the journal does not hand it out); at once when none is
        left.

        Raises:
            ProducerFailed, ProducerStopped: the queue failed or was stopped
                with jobs not done (they are not lost when stored: a queue
                started again on the journal hands them out).
            ProducerSystemExited: the system has exited.
        """
        if not self.system.running:
            raise self._error()
        while self.jobs or self._done_ids or self._done_writing:
            self._check()
            await self._wait_changed()

    # -- the workers' side ---------------------------------------------------

    def dispatch(self) -> None:
        """Hand waiting jobs to the workers with demand, most demand first."""
        waiting, jobs = self.waiting, self.jobs
        while waiting:
            best: Channel | None = None
            for channel in self.workers.values():
                if channel.demand > 0 and (
                    best is None or channel.demand > best.demand
                ):
                    best = channel
            if best is None:
                return
            job_id = waiting.popleft()
            job = jobs.get(job_id)
            if job is None:
                continue
            try:
                pending = best.reserve(job.message, job.wants_reply, job_id)
            except TypeError:
                # The worker's node cannot decode it: it waits for another.
                waiting.appendleft(job_id)
                self.bad_input += 1
                return
            best.ready(pending)

    def add_worker(self, consumer: ActorRef[Any]) -> bool:
        """Register ``consumer`` (a worker's consumer controller); False
        when it is known already or the table is full."""
        if consumer in self.workers:
            self.workers[consumer].hello()
            return False
        if len(self.workers) >= self.max_workers:
            self.bad_input += 1
            return False
        channel = Channel(
            self.system,
            self.queue_id,
            secrets.token_hex(8),
            max_unconfirmed=self.capacity,
            resend_interval=self.resend_interval,
        )
        channel.endpoint = self.ref
        self.workers[consumer] = channel
        channel.attach(consumer)
        return True

    def remove_worker(self, consumer: ActorRef[Any]) -> None:
        """``consumer`` stopped: its unconfirmed jobs go to other workers."""
        channel = self.workers.pop(consumer, None)
        if channel is None:
            return
        back = sorted(p.job_id for p in channel.unconfirmed if p.job_id in self.jobs)
        self.redispatched += len(back)
        self.waiting.extendleft(reversed(back))
        self.dispatch()

    def on_request(self, request: Request) -> bool:
        """A worker's confirmation and demand. True: the endpoint must start
        a ``write_done`` now (``Done`` events to store, no writer)."""
        channel = self.workers.get(request.consumer)
        if channel is None:
            self.bad_input += 1
            return False
        confirmed = channel.on_request(request)
        due = self._finished(confirmed) if confirmed else False
        self.dispatch()
        return due

    async def write_done(self) -> None:
        """Store the finished jobs' ``Done`` events, one per journal write
        (what finishes meanwhile goes into the next), in the endpoint's
        background (``context.run``): it goes on meanwhile, and a ``Done``
        joins the senders' jobs in one write.

        Raises:
            actors.persistence.JournalError: a write failed (the endpoint
                fails and restarts; those jobs run again only in a queue
                started again on the journal).
        """
        durable = self.durable
        assert durable is not None
        try:
            while self._done_ids and self.failed is None:
                ids, self._done_ids = self._done_ids, []
                await durable.done(ids)
        finally:
            self._done_writing = False
            self._wake()  # wait_done waits for the stored Done events too

    def _finished(self, confirmed: list[Pending]) -> bool:
        ids = []
        for pending in confirmed:
            job = self.jobs.pop(pending.job_id, None)
            if job is None:
                continue  # done already, by another worker
            ids.append(job.job_id)
            self.done += 1
            if job.done is not None:
                job.reply = pending.reply if pending.has_reply else None
                job.done.set()
        self._wake()
        if ids and self.durable is not None and self.failed is None:
            self._done_ids += ids
            if not self._done_writing:
                self._done_writing = True  # from now: one writer at a time
                return True
        return False

    def statistics(self) -> WorkQueueStatistics:
        """The counts so far."""
        return WorkQueueStatistics(
            self.accepted,
            self.done,
            len(self.waiting),
            len(self.jobs) - len(self.waiting),
            len(self.workers),
            self.redispatched,
            self.bad_input + sum(c.bad_input for c in self.workers.values()),
        )

    def _release(self) -> None:
        for job in self.jobs.values():
            if job.done is not None:
                job.done.set()
        self._wake()

    def __repr__(self) -> str:
        return (
            f"WorkQueue({self.queue_id!r}, jobs={len(self.jobs)}, "
            f"workers={len(self.workers)})"
        )
