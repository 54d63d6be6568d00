"""Spawning a pool: its supervisor actor and the supervisor's mailbox, whose
closing stops the pool (see ``_pool.py`` for the pool's ref and routing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from ._actor import Actor
from ._errors import ActorStopped, SystemNotRunning
from ._lifecycle import StopReason
from ._pool import ROUTINGS, Broadcast, PoolRef, Routing
from ._runtime import check_factory
from ._shared_queue import SharedQueue, WorkerMailbox
from ._spawn_options import SpawnOptions, factory_name
from ._strategies import OneForOne, SupervisorStrategy
from ._system_signals import Terminated
from ._validation import check_capacity, check_limit
from .mailbox import Mailbox, MailboxFull

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["PoolSupervisor", "check_pool", "spawn_pool"]


#: How a pool supervises its workers unless told otherwise.
DEFAULT_POOL_STRATEGY = OneForOne(max_restarts=10, within=1.0)


class PoolSupervisor(Actor):
    """The pool's own actor: parent and supervisor of the workers. The workers
    are spawned with it; if it is itself restarted, it spawns fresh ones."""

    supervisor_strategy: ClassVar[SupervisorStrategy | None] = DEFAULT_POOL_STRATEGY

    def __init__(
        self, pool: PoolRef[Any], strategy: SupervisorStrategy | None = None
    ) -> None:
        self.pool = pool
        if strategy is not None:
            # The pool's own strategy (spawn_pool(strategy=...)): read from
            # the instance, as any actor's may be.
            self.supervisor_strategy = strategy  # type: ignore[misc]

    def on_start(self) -> None:
        self._watch_workers()

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        spawn_workers(self.pool)
        self._watch_workers()

    def _watch_workers(self) -> None:
        for worker in self.pool._workers:
            self.context.watch(worker)

    def on_terminated(self, terminated: Terminated) -> None:
        # A worker ended for good (its supervisor said STOP, it stopped
        # itself). Once none is left the pool stops, as an Akka router does
        # when its last routee ends: what it was told would wait for workers
        # that never come. (Workers replaced by the pool's own restart are
        # new cells, alive by the time their predecessors' notices arrive.)
        if all(w._cell.ended for w in self.pool._workers):
            self.context.stop()


# What the pool's supervisor does to its PoolRef: the ref routes, this module
# makes and unmakes its workers.


def spawn_workers(pool: PoolRef[Any]) -> None:
    """Spawn (or, after a restart of the pool, re-spawn) every worker, and
    hand them what the pool held meanwhile."""
    factory, args, kwargs, options = pool._spawn_args
    shared = pool._shared
    fresh = not pool._workers
    for index in range(pool.size):
        mailbox = WorkerMailbox(shared) if shared is not None else None
        ref = pool._cell.runtime.spawn(
            pool._cell,
            factory,
            args,
            kwargs,
            options.named(f"worker-{index}"),
            mailbox,
            # The first workers are made by the spawner (a factory that
            # fails raises from spawn_pool); after a restart of the pool,
            # in their own tasks, under the pool's supervision.
            construct_now=fresh,
        )
        if fresh:
            pool._workers.append(ref)
        else:
            pool._workers[index] = ref
    held = list(pool._held)
    pool._held.clear()
    for item in held:
        if type(item) is Broadcast:
            # Nobody to raise MailboxFull to: a full worker misses it as a
            # dead letter, and the rest of the hold still goes on.
            pool._broadcast(item.message, held=True)
        else:
            try:
                pool._route(item)
            except (MailboxFull, ActorStopped):
                pool._dead_letters([item], "pool restarting")
    event = pool._respawned
    if event is not None:
        pool._respawned = None
        event.set()


def settle_stopping_pool(pool: PoolRef[Any]) -> None:
    """The pool stops, however it was asked to (see _PoolMailbox): refuse
    new messages, fail queued asks, make queued messages dead letters, and
    stop every worker now (idempotent)."""

    shared = pool._shared
    items = []
    if shared is not None and not shared.closed:
        items = shared.close()
    if pool._held:
        items.extend(pool._held)
        pool._held.clear()
    if items:
        pool._dead_letters(items, "pool stopped")
    event = pool._respawned
    if event is not None:  # waiting senders: they see the pool stopped
        pool._respawned = None
        event.set()
    # Every worker now, not one by one as the pool's termination reaches
    # them: meanwhile round-robin workers would take new tells, and every
    # worker would go on handling its queue and batch, which a stop makes
    # dead letters. A system shutdown reaches them as such.
    cell = pool._cell
    system_stop = cell.stop_reason is StopReason.SYSTEM
    reason = StopReason.SYSTEM if system_stop else StopReason.PARENT
    for worker in pool._workers:
        worker._cell.request_stop(reason)


class _PoolMailbox(Mailbox[Any]):
    """The pool supervisor's own mailbox. The runtime closes an actor's mailbox
    when it is asked to stop and when it terminates, however that happens
    (stopped, its parent stopping, the system's teardown, cancelled by a
    shutdown timeout, or stopped while suspended by a one-for-all restart); a
    restart never closes it. So closing it is where the pool stops taking
    messages and settles what is queued, with no lifecycle hook involved."""

    __slots__ = ("_pool",)

    def __init__(self, pool: PoolRef[Any]) -> None:
        super().__init__()
        self._pool = pool

    def close(self) -> None:
        if not self.closed:
            super().close()
            settle_stopping_pool(self._pool)


def check_pool(
    factory: object,
    size: object,
    routing: object,
    capacity: object,
    strategy: object,
) -> None:
    """A ``spawn_pool``'s arguments (its name, drain and the workers' options
    are ``SpawnOptions``'): one home for the rule, the runtime's and the
    BehaviorTestKit's.

    Raises:
        TypeError: ``size`` or ``capacity`` is not an integer, ``factory`` is
            not an Actor factory, ``strategy`` is neither None nor a
            SupervisorStrategy.
        ValueError: ``size`` < 1, ``capacity`` < 1, an unknown ``routing``.
    """
    check_limit(size, "size")  # type: ignore[arg-type]
    if strategy is not None and not isinstance(strategy, SupervisorStrategy):
        raise TypeError(
            f"strategy must be a SupervisorStrategy or None, not {strategy!r}"
        )
    if routing not in ROUTINGS:
        raise ValueError(f"routing must be one of {ROUTINGS}, not {routing!r}")
    check_factory(factory)
    check_capacity(capacity)  # type: ignore[arg-type]


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
    strategy: SupervisorStrategy | None = None,
) -> PoolRef[Any]:
    """Spawn a pool under ``parent``; see
    [``ActorSystem.spawn_pool``][actors.ActorSystem.spawn_pool].

    Raises:
        TypeError: ``size`` is not an integer, ``factory`` is not an Actor
            factory, or ``strategy`` is neither None nor a SupervisorStrategy.
        ValueError: ``size`` < 1, unknown ``routing``, bad ``capacity`` /
            ``drain``, or a taken name.
    """
    check_pool(factory, size, routing, capacity, strategy)
    system = parent.runtime
    # The workers' options: the shared queue carries a shared_queue pool's
    # quota, so its workers' own lanes are unbounded.
    worker = SpawnOptions(
        None, capacity if routing == "round_robin" else None, drain, "transient"
    )
    options = SpawnOptions(name)
    backend = system.backend
    if backend is None or not system.running:
        raise SystemNotRunning("the actor system is not running")
    shared = SharedQueue(capacity, backend) if routing == "shared_queue" else None
    # Chosen once: a traced system's pool ref carries trace contexts.
    pool_class = PoolRef if system.telemetry is None else system.telemetry._pool_ref
    spec = (factory, args, kwargs, worker)
    pool: PoolRef[Any] = pool_class(routing, size, shared, spec)
    if name is None:
        base = f"pool-{factory_name(factory)}"
        options = options.named(system.default_name(parent, base))
    mailbox = _PoolMailbox(pool)
    # Started once its first workers are made: if one fails, the pool ends
    # at once (its name free again, as a spawn's), never having run.
    ref = system.spawn(
        parent, PoolSupervisor, (pool, strategy), {}, options, mailbox, start=False
    )
    cell = pool._cell = ref._cell
    # The pool is its cell's ref: what names the cell names the pool
    # (Terminated to its watchers, its dead letters, context.children,
    # lookups). A traced receive reads its labels there: the supervisor's.
    labels = getattr(ref, "labels", None)
    if labels is not None:
        vars(pool)["labels"] = labels
    cell.ref = pool
    try:
        spawn_workers(pool)
    except BaseException as exc:
        # A worker's factory failed at once: the pool ends now with that
        # reason (the workers made so far stop with it), and spawn_pool
        # raises it.
        system.never_started(cell, exc)
        raise
    system.start(cell)
    return pool
