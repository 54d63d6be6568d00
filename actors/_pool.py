"""Worker pools: W workers behind one ref, for fan-out work.

Two routings:

* ``"round_robin"``: each worker has its own mailbox; messages go to the workers
  in turn (a full or stopped worker is skipped).
* ``"shared_queue"``: one queue, built on the channel core, that idle workers
  pull from with batch receives: a woken worker takes up to ``drain`` items, and
  a burst never wakes more workers than it feeds (coalesced wakeups). The queue
  carries the pool's quota (``capacity``): ``tell`` raises ``MailboxFull`` and
  ``send`` waits when it is full.

The workers are children of a pool supervisor actor, which restarts a failed
worker (one-for-one); a restarted worker keeps the items it had taken but not
handled, so a failure never loses other queued work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, overload

import anyio

from ._actor import Actor
from ._envelope import EXPIRED, Ask, abandon
from ._errors import ActorStopped, AskSelfError, AskTimeout, MailboxFull
from ._lifecycle import StopReason, current_cell
from ._ref import ActorRef, check_timeout
from ._request import Request
from ._shared_queue import SharedQueue, WorkerMailbox
from ._supervision import OneForOne, SupervisorStrategy
from .channel._state import check_limit
from .mailbox import MailboxClosed, Signal
from .mailbox._quota import check_capacity

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["PoolRef", "Routing", "spawn_pool"]

Routing = Literal["round_robin", "shared_queue"]
ROUTINGS: tuple[Routing, ...] = ("round_robin", "shared_queue")

M = TypeVar("M", contravariant=True)
R = TypeVar("R")


class PoolSupervisor(Actor):
    """The pool's own actor: parent and supervisor of the workers. The workers
    are spawned with it; if it is itself restarted, it spawns fresh ones."""

    supervisor_strategy: ClassVar[SupervisorStrategy | None] = OneForOne(
        max_restarts=10, within=1.0
    )

    def __init__(self, pool: PoolRef[Any]) -> None:
        self.pool = pool

    def on_restart(self, exc: BaseException | None) -> None:
        self.pool._spawn_workers()

    def on_stop(self) -> None:
        # on_stop also runs before a restart of the pool (its restart
        # intensity exceeded): the queue must stay open for the fresh workers
        # then (it was closed, so the live pool refused every message).
        if self.pool._cell.stop_requested:
            self.pool._closed_by_stop()


class PoolRef(Generic[M]):
    """One ref in front of a pool of workers: tell, send, ask, broadcast, stop,
    join. Messages to the pool go to one worker each (see the routing); a
    broadcast goes to every worker."""

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
        self._spawn_args = spawn_args  # (factory, args, kwargs, capacity, drain)
        self._workers: list[ActorRef[Any]] = []
        self._next = 0

    def _spawn_workers(self) -> None:
        """Spawn (or, after a restart of the pool, re-spawn) every worker."""
        factory, args, kwargs, capacity, drain = self._spawn_args
        shared = self._shared
        fresh = not self._workers
        for index in range(self.size):
            mailbox = WorkerMailbox(shared) if shared is not None else None
            ref = self._cell.system._spawn(
                self._cell,
                factory,
                args,
                kwargs,
                f"worker-{index}",
                None if shared is not None else capacity,
                drain,
                "transient",
                mailbox,
            )
            if fresh:
                self._workers.append(ref)
            else:
                self._workers[index] = ref

    # -- sending ------------------------------------------------------------

    def tell(self, message: M) -> None:
        """Give a message to one worker; never waits.

        Raises:
            MailboxFull: the shared queue is full (``shared_queue``), or every
                worker's mailbox is (``round_robin``).
            ActorStopped: the pool has stopped.
            TypeError: ``message`` is a runtime signal.
        """
        shared = self._shared
        if shared is not None:
            try:
                shared.try_send(message)
            except MailboxClosed:
                raise self._stopped() from None
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
            self._route(message)

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
        raise self._stopped()

    async def send(self, message: M) -> None:
        """Give a message to one worker, waiting for room (backpressure).

        Raises:
            ActorStopped: the pool has stopped (or stopped while we waited).
            TypeError: ``message`` is a runtime signal.
        """
        await self._send(message)

    async def _send(self, message: object) -> None:
        shared = self._shared
        try:
            if shared is not None:
                await shared.send(message)
                return
            workers = self._workers
            if not workers:
                raise self._stopped()
            try:
                self._route(message)
            except MailboxFull:
                worker = workers[self._next % len(workers)]
                self._next += 1
                await worker._cell.mailbox.send(message)
        except MailboxClosed:
            raise self._stopped() from None

    @overload
    async def ask(self, message: Request[R], timeout: float = 5.0) -> R: ...

    @overload
    async def ask(self, message: M, timeout: float = 5.0) -> Any: ...

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        """Ask one worker; same reply, timeout (seconds) and errors as
        :meth:`ActorRef.ask`."""
        check_timeout(timeout)
        if isinstance(message, Signal):
            # The Ask envelope would smuggle it past the queue's signal check
            # (as ActorRef.ask refuses it).
            raise TypeError(f"{message!r} is a runtime signal: it cannot be asked")
        cell = current_cell.get()
        if cell is not None and cell.parent is self._cell:
            raise AskSelfError(f"{cell.path} asked its own pool from its handler")
        backend = self._cell.system.backend
        if backend is None:
            raise self._stopped()
        envelope = Ask(message, self._cell)
        shared = self._shared
        try:
            if shared is not None:
                shared.try_send(envelope)
            else:
                self._route(envelope)
        except MailboxFull:
            # Wait for room and the reply under one deadline.
            with anyio.move_on_after(timeout):
                try:
                    await self._send(envelope)
                except BaseException:
                    abandon(envelope)  # see ActorRef.ask
                    raise
                return await envelope.wait(backend)
            raise AskTimeout(
                f"{self._cell.path} did not reply within {timeout} s"
            ) from None
        except MailboxClosed:
            raise self._stopped() from None
        # The usual case, queued at once: the backend's timed park, much
        # cheaper than a cancel scope per ask (as ActorRef.ask).
        deadlines = self._cell.system._deadlines
        if deadlines is not None:  # asyncio: see ActorRef.ask
            reply = await deadlines.wait(envelope, timeout)
        else:
            reply = await envelope.wait(backend, timeout)
        if reply is EXPIRED:
            raise AskTimeout(f"{self._cell.path} did not reply within {timeout} s")
        return reply

    def broadcast(self, message: M) -> None:
        """Tell every live worker the message (uncounted by the shared queue's
        quota; counted by each worker's own quota in ``round_robin``).

        Raises:
            MailboxFull: a worker's mailbox is full (the others still got it).
            ActorStopped: the pool has stopped.
        """
        if not self.is_alive:
            raise self._stopped()
        full = None
        for worker in self._workers:
            try:
                worker._cell.mailbox.try_send(message)
            except MailboxFull as exc:
                full = exc
            except MailboxClosed:
                pass
        if full is not None:
            raise full

    # -- lifecycle -----------------------------------------------------------

    def stop(self) -> None:
        """Stop the pool: new messages are refused at once; the workers stop
        after their current message; what is queued becomes dead letters."""
        self._closed_by_stop()
        # Stop every worker now, not one by one as the pool's termination
        # reaches them: meanwhile round-robin workers took new tells, and
        # every worker went on handling its queue and batch, which a stop
        # makes dead letters.
        for worker in self._workers:
            worker._cell.request_stop(StopReason.PARENT)
        self._cell.request_stop(StopReason.NORMAL)

    def _closed_by_stop(self) -> None:
        shared = self._shared
        if shared is None or shared.closed:
            return
        system = self._cell.system
        stopped = ActorStopped(f"{self._cell.path} stopped before replying")
        items = shared.close()
        if system.telemetry is not None:  # take off the trace envelopes
            items = system.telemetry.unwrap(items)
        for item in items:
            if type(item) is Ask:
                item.fail(stopped, system.backend)
                system.dead_letter(self._cell, item.message, "pool stopped")
            else:
                system.dead_letter(self._cell, item, "pool stopped")

    async def join(self) -> object:
        """Wait until the pool and all its workers have terminated; returns how
        the pool ended."""
        await self._cell.terminated.wait()
        return self._cell.reason

    @property
    def is_alive(self) -> bool:
        return self._cell.alive

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
        return ActorStopped(f"the pool {self._cell.path} has stopped")

    def __repr__(self) -> str:
        state = "alive" if self.is_alive else "stopped"
        return f"<PoolRef {self._cell.path} {self.routing} size={self.size} {state}>"


def spawn_pool(
    parent: Cell,
    factory: Callable[..., Actor],
    size: int,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    routing: Routing,
    name: str | None,
    capacity: int | None,
    drain: int | None,
) -> PoolRef[Any]:
    """Spawn a pool under ``parent``; see :meth:`ActorSystem.spawn_pool`.

    Raises:
        TypeError: ``size`` is not an integer, or ``factory`` is not an Actor
            factory.
        ValueError: ``size`` < 1, unknown ``routing``, bad ``capacity`` /
            ``drain``, or a taken name.
    """
    check_limit(size, "size")
    if routing not in ROUTINGS:
        raise ValueError(f"routing must be one of {ROUTINGS}, not {routing!r}")
    if isinstance(factory, type) and not issubclass(factory, Actor):
        raise TypeError(f"{factory.__name__} is not an Actor subclass")
    if not callable(factory):
        raise TypeError(f"factory must be callable, not {factory!r}")
    system = parent.system
    check_capacity(capacity)
    if drain is not None:
        check_limit(drain, "drain")
    backend = system.backend
    if backend is None:
        raise ActorStopped("the actor system is not running")
    shared = SharedQueue(capacity, backend) if routing == "shared_queue" else None
    # Chosen once: a traced system's pool ref carries trace contexts.
    pool_class = PoolRef if system.telemetry is None else system.telemetry.pool_ref
    pool: PoolRef[Any] = pool_class(
        routing, size, shared, (factory, args, kwargs, capacity, drain)
    )
    if name is None:
        system._names += 1
        name = f"pool-{getattr(factory, '__name__', 'worker').lower()}-{system._names}"
    ref = system._spawn(
        parent, PoolSupervisor, (pool,), {}, name, None, None, "transient"
    )
    pool._cell = ref._cell
    pool._spawn_workers()
    return pool
