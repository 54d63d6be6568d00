"""Pools across processes: workers on several nodes behind one ref.

``system.remote.spawn_pool(Worker, *args, nodes=[...])`` (or
``processes=N``: N node processes on this machine) returns a
[``RemotePoolRef``][actors.remote.RemotePoolRef] at once. A coordinator actor in
this process holds the pool's queue; on each node a member (see ``_agent``) runs
the workers. Members join in the background and again after their node restarts,
so the pool's capacity grows and shrinks with its nodes.

Work is pulled: a member has a window of ``workers * prefetch`` jobs, and each
report of finished jobs gives their credits back (see ``_pool_protocol``).
The coordinator hands queued jobs to the members with the most credit, so a
node twice as fast gets twice the jobs.

At-least-once across node loss: the jobs a member took and did not report
are dispatched again when its node is declared down (``NodeDown``) or the
member ends; a job whose report was lost with its node runs twice. Handlers
must be idempotent (or their effects deduplicated) where that matters.
"""

from __future__ import annotations

import contextlib
from typing import Any, TypeVar

import anyio

from ... import (
    ActorRef,
    ActorStopped,
    AskTimeout,
    MailboxFull,
    RefStatistics,
    SystemNotRunning,
)
from .._node import check_token
from ._pool_coordinator import Answer, PoolCoordination
from ._pool_joining import keep_member
from ._pool_protocol import Broadcast

__all__ = ["RemotePoolRef"]

M = TypeVar("M", contravariant=True)


class RemotePoolRef(ActorRef[M]):
    """One ref in front of workers on several nodes: ``tell``, ``send``,
    ``ask`` and ``broadcast`` as a local pool's, ``stop`` and ``join``; an
    [``ActorRef``][actors.ActorRef] (as ``PoolRef`` and ``RemoteRef``), so it
    can be watched, passed and compared like one.

    Messages are encoded when they are given (an unregistered type raises
    ``TypeError`` at the call) and wait in the pool's queue (``capacity``)
    until a member has credit. Jobs are at-least-once across node loss (see
    the module doc); otherwise each runs once.

    Attributes:
        nodes: the names of the nodes the pool runs on (or tries to).
        capacity: messages the pool's queue holds (None: unbounded).
    """

    __slots__ = ("_pool",)

    def __init__(self, pool: PoolCoordination) -> None:
        # No local cell: every ActorRef method that reads it is overridden
        # (the pool's state is its own, the coordinator's actor behind it).
        self._cell = None  # type: ignore[assignment]
        self._pool = pool

    def tell(self, message: M) -> None:
        """Queue ``message`` for one worker; never waits.

        To a pool that has stopped the message is a dead letter to the pool,
        reason ``"actor stopped"``, as a tell to a local pool that stopped
        (see [``ActorRef.tell``][actors.ActorRef.tell]).

        Raises:
            TypeError: its type is not registered with the codec.
            FrameTooLarge: it does not fit one NATS message.
            MailboxFull: the pool's queue holds ``capacity`` messages.
            SystemNotRunning: the pool's system has exited.
        """
        pool = self._pool
        if not pool.alive:
            host = pool.host
            if host is None or not host.system.running:
                raise SystemNotRunning(f"the system of the pool {pool.name} has exited")
            host.dead_letter(self, message, "actor stopped")
            return
        job = pool.job(message, None)
        capacity = pool.capacity  # pool.full() written out: a call saved per tell
        if capacity is not None and len(pool.queue) >= capacity:
            raise MailboxFull(f"the pool {pool.name} is full")
        pool.enqueue(job)

    async def send(self, message: M) -> None:
        """As [``tell``][actors.remote.RemotePoolRef.tell], waiting for room in
        the queue (backpressure).

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as
                [``tell``][actors.remote.RemotePoolRef.tell].
        """
        pool = self._pool
        job = pool.job(message, None)
        await pool.wait_room()
        pool.enqueue(job)

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        """Ask one worker; its reply (decoded), within ``timeout`` seconds
        (waiting for room in the queue included).

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as
                [``tell``][actors.remote.RemotePoolRef.tell] (``ActorStopped``
                also when the pool stops before the reply).
            AskTimeout: no reply in time; its message says when the pool had
                no live worker.
            Exception: the handler's exception (as ``RemoteRef.ask``).
        """
        pool = self._pool
        answer = Answer()
        job = pool.job(message, answer)
        queued = False
        try:
            with anyio.move_on_after(timeout):
                await pool.wait_room()
                pool.enqueue(job)
                queued = True
                await answer.event.wait()
        finally:
            if not answer.done:
                answer.done = True  # a late outcome is dropped
                if queued:
                    # Still queued: it never runs. In flight: its outcome
                    # is ignored.
                    with contextlib.suppress(ValueError):
                        pool.queue.remove(job)
        if answer.error is not None:
            raise answer.error
        if answer.event.is_set():
            return answer.value
        if not pool.members:
            refused = "".join(
                f"; node {node} refused: {type(error).__name__}: {error}"
                for node, error in pool.errors.items()
            ) + "".join(
                f"; its members on {node} ended soon after joining {count} "
                f"times in a row (last failure: "
                f"{pool.ended.get(node, 'unknown'):.200}; "
                "see that node's log)"
                for node, count in pool.quick_losses.items()
            )
            raise AskTimeout(
                f"the pool {pool.name} has no live worker (nodes: "
                f"{', '.join(pool.nodes)}{refused}); no reply within {timeout} s"
            )
        raise AskTimeout(f"the pool {pool.name} did not reply within {timeout} s")

    def broadcast(self, message: M) -> None:
        """Tell every worker of every live member ``message``.

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as
                [``tell``][actors.remote.RemotePoolRef.tell].
            MailboxFull: the outbound buffer to a node is full (the others
                got it).
        """
        pool = self._pool
        job = pool.job(message, None)
        full: MailboxFull | None = None
        for member in pool.members.values():
            try:
                member.ref.tell(Broadcast(job.tag, job.body))
            except MailboxFull as exc:
                full = exc
        if full is not None:
            raise full

    def add_node(self, node: str) -> None:
        """Run workers on one more node too: a member joins it as soon as it
        is up (and again after it restarts), as for the nodes the pool was
        spawned with.

        Raises:
            TypeError / ValueError: ``node`` is not a node name.
            ValueError: the pool has that node already.
            ActorStopped: the pool has stopped.
        """
        pool = self._pool
        check_token("node", node)
        if node in pool.nodes:
            raise ValueError(f"the pool {pool.name} has node {node!r} already")
        if not pool.alive:
            raise ActorStopped(f"the pool {pool.name} has stopped")
        pool.nodes.append(node)
        host = pool.host
        if pool.context is not None and host is not None:
            host.task_group.start_soon(keep_member, pool, node)
        # else: the coordinator starts it with the others

    def stop(self) -> None:
        """Stop the pool: its members stop on their nodes, queued asks fail
        with ``ActorStopped``, queued messages are dead letters, and the node
        processes it started leave."""
        ref = self._pool.ref
        if ref is not None:
            ref.stop()

    async def join(self) -> Any:
        """Wait until the pool has stopped (its processes included); how its
        coordinator ended."""
        ref = self._pool.ref
        assert ref is not None
        return await ref.join()

    async def wait_ready(
        self, members: int | None = None, timeout: float = 30.0
    ) -> None:
        """Wait until ``members`` members (default: one per node) have joined.

        Raises:
            SpawnError / Exception: too many nodes cannot join for that many
                members (a node refused, e.g. it does not host the class, or
                its process exited); the first node's error.
            TimeoutError: fewer members after ``timeout`` seconds.
            ActorStopped: the pool has stopped.
        """
        pool = self._pool
        wanted = len(pool.nodes) if members is None else members
        with anyio.fail_after(timeout):
            while True:
                if not pool.alive:
                    raise ActorStopped(f"the pool {pool.name} has stopped")
                if len(pool.members) >= wanted:
                    return
                errors = pool.errors
                if errors and len(pool.nodes) - len(errors) < wanted:
                    raise next(iter(errors.values()))
                await pool.changed.wait()

    async def wait_idle(self) -> None:
        """Wait until every message given to the pool so far was handled
        (reported by its node): nothing queued, nothing in flight. Returns at
        once when the pool has stopped.
        """
        pool = self._pool
        while pool.alive and not pool.is_idle():
            idle = pool.idle
            if idle is None:
                idle = pool.idle = anyio.Event()
            await idle.wait()

    def statistics(self) -> RefStatistics:
        """A snapshot of the pool's queue (``queued_messages``: waiting for
        credit; ``capacity``: the queue's)."""
        pool = self._pool
        return RefStatistics(len(pool.queue), 0, pool.capacity, 0)

    @property
    def is_alive(self) -> bool:
        return self._pool.alive

    @property
    def coordinator(self) -> ActorRef[Any] | None:
        """The pool's coordinator actor, in this process (None until it is
        spawned): the pool stops when it does."""
        return self._pool.ref

    @property
    def name(self) -> str:
        """The coordinator actor's name (the pool's)."""
        return self._pool.name

    @property
    def path(self) -> str:
        """The coordinator actor's path."""
        return self._pool.path

    @property
    def nodes(self) -> list[str]:
        """The names of the nodes the pool runs on (or tries to)."""
        return self._pool.nodes

    @property
    def capacity(self) -> int | None:
        """Messages the pool's queue holds (None: unbounded)."""
        return self._pool.capacity

    @property
    def members(self) -> list[str]:
        """The nodes with a live member now."""
        return [member.node for member in self._pool.members.values()]

    @property
    def size(self) -> int:
        """Live workers now (members times workers per node)."""
        pool = self._pool
        return len(pool.members) * pool.spec.workers

    @property
    def queued(self) -> int:
        """Messages waiting in the pool's queue for credit."""
        return len(self._pool.queue)

    @property
    def in_flight(self) -> dict[str, int]:
        """Jobs taken and not yet reported, per node."""
        return {m.node: len(m.jobs) for m in self._pool.members.values()}

    @property
    def pids(self) -> list[int]:
        """The ids of the node processes the pool started (``processes=N``)."""
        processes = self._pool.processes
        return [] if processes is None else processes.pids

    @property
    def errors(self) -> dict[str, BaseException]:
        """Nodes that refused to join (their error), e.g. a class they do
        not host."""
        return self._pool.errors

    @property
    def failures(self) -> int:
        """Jobs told (not asked) whose handler failed on their node."""
        return self._pool.failures

    @property
    def redispatched(self) -> int:
        """Jobs dispatched again after their member (or its report) was
        lost."""
        return self._pool.redispatched

    @property
    def handled(self) -> dict[str, int]:
        """Jobs reported done, per node name (since the pool started)."""
        return self._pool.handled

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemotePoolRef) and other._pool is self._pool

    def __hash__(self) -> int:
        return id(self._pool)

    def __repr__(self) -> str:
        pool = self._pool
        return (
            f"<RemotePoolRef {pool.path} members={len(pool.members)} "
            f"queued={len(pool.queue)}>"
        )
