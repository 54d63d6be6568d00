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
from typing import Any, Generic, TypeVar

import anyio
import msgspec

from .. import ActorStopped, AskTimeout, MailboxFull
from ._errors import FrameTooLarge
from ._node import check_token
from ._pool_coordinator import Answer, Job, PoolCoordination
from ._pool_protocol import Broadcast

__all__ = ["RemotePoolRef"]

M = TypeVar("M", contravariant=True)


class RemotePoolRef(PoolCoordination, Generic[M]):
    """One ref in front of workers on several nodes: ``tell``, ``send``,
    ``ask`` and ``broadcast`` as a local pool's, ``stop`` and ``join``.

    Messages are encoded when they are given (an unregistered type raises
    ``TypeError`` at the call) and wait in the pool's queue (``capacity``)
    until a member has credit. Jobs are at-least-once across node loss (see
    the module doc); otherwise each runs once.
    """

    def _job(self, message: object, answer: Answer | None) -> Job:
        if not self._alive:
            raise ActorStopped(f"the pool {self.name} has stopped")
        tag, body = self._codec.encode(message)
        if len(body) > self._max_body:
            raise FrameTooLarge(
                f"a message of {len(body)} bytes does not fit a frame "
                f"(at most {self._max_body})"
            )
        return Job(next(self._ids), message, tag, msgspec.Raw(body), answer)

    def _full(self) -> bool:
        capacity = self.capacity
        return capacity is not None and len(self._queue) >= capacity

    def _enqueue(self, job: Job) -> None:
        self._queue.append(job)
        # Dispatched by the dispatcher task once the caller yields: a burst of
        # tells travels as one Jobs message per member, not one each.
        if not self._kicked:
            self._kicked = True
            self._wake.set()

    async def _wait_room(self) -> None:
        while self._full():
            room = self._room
            if room is None:
                room = self._room = anyio.Event()
            await room.wait()
            if not self._alive:
                raise ActorStopped(f"the pool {self.name} has stopped")

    def tell(self, message: M) -> None:
        """Queue ``message`` for one worker; never waits.

        Raises:
            TypeError: its type is not registered with the codec.
            FrameTooLarge: it does not fit one NATS message.
            MailboxFull: the pool's queue holds ``capacity`` messages.
            ActorStopped: the pool has stopped.
        """
        job = self._job(message, None)
        if self._full():
            raise MailboxFull(f"the pool {self.name} is full")
        self._enqueue(job)

    async def send(self, message: M) -> None:
        """As [``tell``][actors.remote.RemotePoolRef.tell], waiting for room in
        the queue (backpressure).

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as
                [``tell``][actors.remote.RemotePoolRef.tell].
        """
        job = self._job(message, None)
        await self._wait_room()
        self._enqueue(job)

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
        answer = Answer()
        job = self._job(message, answer)
        queued = False
        try:
            with anyio.move_on_after(timeout):
                await self._wait_room()
                self._enqueue(job)
                queued = True
                await answer.event.wait()
        finally:
            if not answer.done:
                answer.done = True  # a late outcome is dropped
                if queued:
                    # Still queued: it never runs. In flight: its outcome
                    # is ignored.
                    with contextlib.suppress(ValueError):
                        self._queue.remove(job)
        if answer.error is not None:
            raise answer.error
        if answer.event.is_set():
            return answer.value
        if not self._members:
            refused = "".join(
                f"; node {node} refused: {type(error).__name__}: {error}"
                for node, error in self.errors.items()
            ) + "".join(
                f"; its members on {node} ended soon after joining {count} "
                f"times in a row (last failure: "
                f"{self.ended.get(node, 'unknown'):.200}; "
                "see that node's log)"
                for node, count in self.quick_losses.items()
            )
            raise AskTimeout(
                f"the pool {self.name} has no live worker (nodes: "
                f"{', '.join(self.nodes)}{refused}); no reply within {timeout} s"
            )
        raise AskTimeout(f"the pool {self.name} did not reply within {timeout} s")

    def broadcast(self, message: M) -> None:
        """Tell every worker of every live member ``message``.

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as
                [``tell``][actors.remote.RemotePoolRef.tell].
            MailboxFull: the outbound buffer to a node is full (the others
                got it).
        """
        job = self._job(message, None)
        full: MailboxFull | None = None
        for member in self._members.values():
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
        check_token("node", node)
        if node in self.nodes:
            raise ValueError(f"the pool {self.name} has node {node!r} already")
        if not self._alive:
            raise ActorStopped(f"the pool {self.name} has stopped")
        self.nodes.append(node)
        host = self._remote._host
        if self._context is not None and host is not None:
            host.task_group.start_soon(self._keep, node)
        # else: the coordinator starts it with the others

    def stop(self) -> None:
        """Stop the pool: its members stop on their nodes, queued asks fail
        with ``ActorStopped``, queued messages are dead letters, and the node
        processes it started leave."""
        if self._ref is not None:
            self._ref.stop()

    async def join(self) -> object:
        """Wait until the pool has stopped (its processes included)."""
        assert self._ref is not None
        return await self._ref.join()

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
        wanted = len(self.nodes) if members is None else members
        with anyio.fail_after(timeout):
            while True:
                if not self._alive:
                    raise ActorStopped(f"the pool {self.name} has stopped")
                if len(self._members) >= wanted:
                    return
                errors = self.errors
                if errors and len(self.nodes) - len(errors) < wanted:
                    raise next(iter(errors.values()))
                await self._changed.wait()

    async def wait_idle(self) -> None:
        """Wait until every message given to the pool so far was handled
        (reported by its node): nothing queued, nothing in flight. Returns at
        once when the pool has stopped.
        """
        while self._alive and not self._is_idle():
            idle = self._idle
            if idle is None:
                idle = self._idle = anyio.Event()
            await idle.wait()

    @property
    def is_alive(self) -> bool:
        return self._alive

    @property
    def members(self) -> list[str]:
        """The nodes with a live member now."""
        return [member.node for member in self._members.values()]

    @property
    def size(self) -> int:
        """Live workers now (members times workers per node)."""
        return len(self._members) * self._spec.workers

    @property
    def queued(self) -> int:
        """Messages waiting in the pool's queue for credit."""
        return len(self._queue)

    @property
    def in_flight(self) -> dict[str, int]:
        """Jobs taken and not yet reported, per node."""
        return {m.node: len(m.jobs) for m in self._members.values()}

    @property
    def pids(self) -> list[int]:
        """The ids of the node processes the pool started (``processes=N``)."""
        return [] if self._processes is None else self._processes.pids

    def __repr__(self) -> str:
        return (
            f"<RemotePoolRef {self.path} members={len(self._members)} "
            f"queued={len(self._queue)}>"
        )
