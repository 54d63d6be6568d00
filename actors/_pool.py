"""Worker pools: W workers behind one ref, for fan-out work.

Two routings:

* ``"round_robin"``: each worker has its own mailbox; messages go to the workers
  in turn (a full or stopped worker is skipped).
* ``"shared_queue"``: one queue, built on the channel core, that idle workers
  pull from: a burst is handed one message per idle worker (never waking more
  workers than it feeds), and a worker takes from the queue up to ``drain``
  items but no more than its fair share of them (see ``_shared_queue``). The
  queue carries the pool's quota (``capacity``): ``tell`` raises
  ``MailboxFull`` and ``send`` waits when it is full.

The workers are children of a pool supervisor actor, which restarts a failed
worker (one-for-one); a restarted worker keeps the items it had taken but not
handled, so a failure never loses other queued work.

A pool restarted by its parent keeps its ref and its queued messages, as an
actor does: while its workers are replaced, messages wait (in the shared queue,
or for ``round_robin`` in the pool's own hold, flushed to the new workers).
Whatever way the pool supervisor ends, closing its own mailbox stops the pool:
the queue is closed, queued asks fail with ``ActorStopped`` and queued
messages become dead letters, with no lifecycle hook involved.

Its size: one class, ``PoolRef``, whose routing, restart hold and stop
share their state; spawning lives in ``_pool_spawn``.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio

from ._envelope import EXPIRED, Ask, abandon
from ._errors import (
    ActorStopped,
    AskTimeout,
    MailboxFull,
    SystemNotRunning,
)
from ._lifecycle import ExitReason, StopReason
from ._ref import (
    ActorRef,
    RefStatistics,
    ReplyTypeMismatch,
    prepare_ask,
    signal_error,
    told_stopped,
)
from ._request import Request
from ._shared_queue import SharedQueue
from .mailbox import MailboxClosed, Signal

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["ROUTINGS", "PoolRef", "Routing"]

Routing = Literal["round_robin", "shared_queue"]
ROUTINGS: tuple[Routing, ...] = ("round_robin", "shared_queue")

M = TypeVar("M", contravariant=True)
R = TypeVar("R")


class Broadcast:
    """A broadcast the pool holds while all its workers are being replaced."""

    __slots__ = ("message",)

    def __init__(self, message: object) -> None:
        self.message = message


class PoolRef(ActorRef[M]):
    """One ref in front of a pool of workers: tell, send, ask, broadcast, stop,
    join. Messages to the pool go to one worker each (see the routing); a
    broadcast goes to every worker.

    A pool is a ref like an actor's (an [``ActorRef``][actors.ActorRef] subclass):
    ``context.watch(pool)`` delivers one ``Terminated`` whose ``ref`` is the
    pool when the pool has ended, its parent stops it with
    ``context.stop(pool)``, ``context.child(name)`` and ``system.lookup(path)``
    find it, and ``system.register`` names it.

    A pool restarted by its parent (a one-for-all or rest-for-one restart, or
    its own restart intensity exceeded) keeps this ref and its messages, as a
    restarted actor does: while the workers are replaced it stays alive and
    what it is told waits for the new workers. Messages already in a stopped
    worker's own mailbox become dead letters (asks fail with ActorStopped).
    A worker that ends for good (its supervisor said stop, or it stopped
    itself) is skipped; once every worker has ended, the pool stops too, as
    an Akka router does when its last routee ends. Once the pool stops,
    however that happens, nothing is lost: every queued ask fails with
    ActorStopped and every queued message is a dead letter."""

    def __init__(
        self,
        routing: Routing,
        size: int,
        shared: SharedQueue | None,
        spawn_args: tuple[Any, ...],
    ) -> None:
        self._cell: Cell = None  # type: ignore[assignment]  # set by spawn_pool
        self.routing: Routing = routing
        self.size = size
        self._shared = shared
        self._spawn_args = spawn_args  # (factory, args, kwargs, worker options)
        self._workers: list[ActorRef[Any]] = []
        self._next = 0
        # Messages (round_robin) and broadcasts kept while every worker is
        # being replaced (a restart of the pool), for the new workers.
        self._held: deque[Any] = deque()
        self._respawned: anyio.Event | None = None  # senders waiting for room

    # -- sending ------------------------------------------------------------

    def tell(self, message: M) -> None:
        """Give a message to one worker; never waits.

        To a pool that has stopped (or is stopping) the message is a dead
        letter to the pool, reason ``"actor stopped"``, as a tell to a stopped
        actor (see [``ActorRef.tell``][actors.ActorRef.tell]).

        Raises:
            MailboxFull: the shared queue is full (``shared_queue``), or every
                worker's mailbox is (``round_robin``; while the workers are
                being replaced: the pool holds ``size * capacity`` at most).
            SystemNotRunning: the pool's system has exited.
            TypeError: ``message`` is a runtime signal.
        """
        shared = self._shared
        if shared is not None:
            try:
                shared.try_send(message)
            except MailboxClosed:
                error = told_stopped(self._cell, message)
                if error is not None:
                    raise error from None
            except TypeError:  # the queue refuses signals
                raise signal_error(message) from None
            return
        # Round-robin fast path, inlined (one Python call less per message):
        # the next worker takes it unless its mailbox is full or closed; then
        # _route tries the others (and this one again, last).
        workers = self._workers
        index = self._next
        self._next = index + 1
        try:
            workers[index % len(workers)]._cell.mailbox.try_send(message)
        except (MailboxFull, MailboxClosed):
            try:
                self._route(message)
            except ActorStopped:  # every worker has stopped, and the pool
                error = told_stopped(self._cell, message)
                if error is not None:
                    raise error from None
        except TypeError:  # the mailbox refuses signals
            raise signal_error(message) from None

    def _offer(self, item: object) -> None:
        """Queue ``item`` (an ask's envelope) at once, as ``tell`` does, but
        raising where a tell is a dead letter: an ask must fail.

        Raises:
            MailboxFull: no room (see ``tell``).
            ActorStopped: the pool has stopped (SystemNotRunning once its
                system has exited).
        """
        shared = self._shared
        try:
            if shared is not None:
                shared.try_send(item)
            else:
                self._route(item)
        except MailboxClosed:
            raise self._stopped() from None

    def _route(self, message: object) -> None:
        workers = self._workers
        count = len(workers)
        full = False
        for _ in range(count):
            worker = workers[self._next % count]
            self._next += 1
            try:
                worker._cell.mailbox.try_send(message)
                return
            except MailboxFull:
                full = True
            except MailboxClosed:
                continue
        if full:
            raise MailboxFull(f"every worker of {self._cell.path} is full")
        # Every worker is stopped: the pool is restarting them (it keeps its
        # messages, as a restarted actor does), or it has stopped.
        if not self.is_alive:
            raise self._stopped()
        capacity = self._spawn_args[3].capacity
        if capacity is not None and len(self._held) >= capacity * count:
            raise MailboxFull(f"{self._cell.path} is restarting and full")
        self._held.append(message)

    async def send(self, message: M) -> None:
        """Give a message to one worker, waiting for room (backpressure).

        ``shared_queue``: waits for room in the pool's queue, which any worker
        makes. ``round_robin``: a worker with room takes it at once; when every
        worker is full, the send waits for room in the worker whose turn it is
        (each has its own mailbox), even if another one frees room first; use
        ``shared_queue`` when handlers can get stuck. A native
        ``Task.cancel()`` after the message moved in leaves it queued, as
        [``ActorRef.send``][actors.ActorRef.send] says.

        Raises:
            ActorStopped: the pool has stopped (or stopped while we waited);
                [``SystemNotRunning``][actors.SystemNotRunning] (a subclass)
                once its system has exited.
            TypeError: ``message`` is a runtime signal.
        """
        if isinstance(message, Signal):
            raise signal_error(message)
        await self._send(message)

    async def _send(self, message: object) -> None:
        shared = self._shared
        try:
            if shared is not None:
                await shared.send(message)
                return
            workers = self._workers
            count = len(workers)
            while True:
                try:
                    self._route(message)
                    return
                except MailboxFull:
                    pass
                # Wait for room in the next open worker, or for the new workers
                # when every one is being replaced and the hold is full.
                for _ in range(count):
                    worker = workers[self._next % count]
                    self._next += 1
                    if not worker._cell.mailbox.closed:
                        break
                else:
                    await self._wait_respawned()
                    continue
                try:
                    await worker._cell.mailbox.send(message)
                    return
                except MailboxClosed:
                    continue  # it stopped while we waited: route again
        except MailboxClosed:
            raise self._stopped() from None

    async def _wait_respawned(self) -> None:
        event = self._respawned
        if event is None:
            event = self._respawned = anyio.Event()
        await event.wait()

    @overload
    async def ask(self, message: Request[R], timeout: float = 5.0) -> R: ...

    @overload  # a Request asked where another reply type is expected
    async def ask(
        self, message: Request[Any], timeout: float = 5.0
    ) -> ReplyTypeMismatch: ...

    @overload
    async def ask(self, message: M, timeout: float = 5.0) -> Any: ...

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        """Ask one worker; same reply, timeout (seconds) and errors as
        [``ActorRef.ask``][actors.ActorRef.ask]
        ([``ActorStopped``][actors.ActorStopped] when the pool stops before a
        worker replied, [``SystemNotRunning``][actors.SystemNotRunning] once its
        system has exited)."""
        try:
            deadlines = prepare_ask(self._cell, message, timeout, pool=True)
        except SystemNotRunning:
            raise self._stopped() from None
        envelope = Ask(message, self._cell)
        try:
            self._offer(envelope)
        except MailboxFull:
            # Wait for room and the reply under one deadline.
            with anyio.move_on_after(timeout):
                try:
                    await self._send(envelope)
                except BaseException:
                    abandon(envelope)  # see ActorRef.ask
                    raise
                return await envelope.wait(deadlines.backend)
            raise AskTimeout(
                f"{self._cell.path} did not reply within {timeout} s"
            ) from None
        # The usual case, queued at once: one timer per timeout value (as
        # ActorRef.ask).
        reply = await deadlines.wait(envelope, timeout)
        if reply is EXPIRED:
            raise AskTimeout(f"{self._cell.path} did not reply within {timeout} s")
        return reply

    def broadcast(self, message: M) -> None:
        """Tell every live worker the message (uncounted by the shared queue's
        quota; counted by each worker's own quota in ``round_robin``). While
        the pool is restarting its workers, the new workers get it; a new
        worker already filled by what the pool held before it gets it as a
        dead letter (nobody is left to raise MailboxFull to).

        A worker that has stopped (alone, or just before its pool's restart)
        does not get it: it is counted as a dead letter for that worker. To a
        pool that has stopped (or is stopping) it is a dead letter for each
        worker, reason ``"actor stopped"``, as a tell to a stopped actor.

        Raises:
            MailboxFull: a worker's mailbox is full (the others still got it).
            SystemNotRunning: the pool's system has exited.
        """
        if isinstance(message, Signal):
            raise signal_error(message)
        if not self.is_alive:
            for worker in self._workers:
                error = told_stopped(worker._cell, message)
                if error is not None:
                    raise error
            return
        self._broadcast(message)

    def _broadcast(self, message: object, held: bool = False) -> None:
        """Tell every worker ``message``; ``held``: a broadcast the pool held
        while restarting, whose caller has returned, so a full worker misses
        it as a dead letter instead of raising MailboxFull."""
        full = None
        skipped = []
        missed = []
        for worker in self._workers:
            try:
                worker._cell.mailbox.try_send(message)
            except MailboxFull as exc:
                full = exc
                missed.append(worker)
            except MailboxClosed:
                skipped.append(worker)
        if len(skipped) == len(self._workers):
            self._held.append(Broadcast(message))  # all being replaced
            return
        # A worker that stopped alone (or just before its pool's restart) does
        # not get it: counted, not silently skipped.
        system = self._cell.runtime
        for worker in skipped:
            (item,) = self._unwrap([message])
            system.dead_letter(worker._cell, item, "worker stopped")
        if held:
            for worker in missed:
                (item,) = self._unwrap([message])
                system.dead_letter(worker._cell, item, "worker full")
        elif full is not None:
            raise full

    # -- lifecycle -----------------------------------------------------------

    def stop(self) -> None:
        """Stop the pool: new messages are refused at once; the workers stop
        after their current message; what is queued becomes dead letters."""
        self._cell.request_stop(StopReason.NORMAL)  # see _stopping

    def _unwrap(self, items: list[Any]) -> list[Any]:
        telemetry = self._cell.runtime.telemetry
        if telemetry is not None:  # take off the trace envelopes
            items = telemetry._unwrap(items)
        return items

    def _dead_letters(self, items: list[Any], reason: str) -> None:
        """Settle items nobody will handle: fail asks, count dead letters."""
        system = self._cell.runtime
        stopped = ActorStopped(f"{self._cell.path} stopped before replying")
        for item in self._unwrap(
            [i.message if type(i) is Broadcast else i for i in items]
        ):
            if type(item) is Ask:
                item.fail(stopped, system.backend)
                system.dead_letter(self._cell, item.message, reason)
            else:
                system.dead_letter(self._cell, item, reason)

    async def join(self) -> ExitReason:
        """Wait until the pool and all its workers have terminated; returns how
        the pool ended (``ExitReason``)."""
        await self._cell.terminated.wait()
        return self._cell.reason

    @property
    def is_alive(self) -> bool:
        """Whether the pool has not begun stopping yet."""
        return self._cell.alive

    def statistics(self) -> RefStatistics:
        """A snapshot of the pool's queues: the shared queue (``shared_queue``)
        or the workers' mailboxes added up (``round_robin``: ``capacity`` is
        then the workers' capacities added up), plus what the pool holds
        while its workers are replaced; ``queued_signals`` adds up the
        workers' signals."""
        signals = 0
        queued = len(self._held)
        waiting = 0
        capacity: int | None = None
        shared = self._shared
        for worker in self._workers:
            stats = worker._cell.mailbox.statistics()
            queued += stats.queued_messages
            signals += stats.queued_signals
            waiting += stats.waiting_senders
        if shared is not None:
            state = shared.state
            queued += len(state.buffer)
            waiting += len(state.senders)
            if state.max_buffer_size != float("inf"):
                capacity = int(state.max_buffer_size)
        else:
            worker_capacity = self._spawn_args[3].capacity
            if worker_capacity is not None:
                capacity = worker_capacity * self.size
        return RefStatistics(queued, signals, capacity, waiting)

    @property
    def workers(self) -> list[ActorRef[Any]]:
        """The workers' refs (stable across worker restarts)."""
        return list(self._workers)

    @property
    def name(self) -> str:
        return self._cell.name

    @property
    def path(self) -> str:
        return self._cell.path

    def _stopped(self) -> ActorStopped:
        if not self._cell.runtime.running:
            path = self._cell.path
            return SystemNotRunning(f"the system of the pool {path} has exited")
        return ActorStopped(f"the pool {self._cell.path} has stopped")

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "stopped"
        return f"<PoolRef {self._cell.path} {self.routing} size={self.size} {state}>"
