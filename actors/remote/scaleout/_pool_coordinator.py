"""The coordinator's side of a pool across processes: members, credits,
dispatch, and what happens when a member is lost (see ``_pool_ref``).

``PoolCoordination`` holds a pool's state and its coordinator actor's
behaviour: the queue jobs wait in (``job``, ``enqueue``, ``wait_room``: what
the users' side calls), members joined (one task per node keeps one there,
see ``_pool_joining``), jobs dispatched to the members with the most credit
(by a task, once a burst of tells is queued), reports giving credits back,
the jobs of a lost member (or lost on the wire: the periodic check)
dispatched again, and the stop.
[``RemotePoolRef``][actors.remote.RemotePoolRef], the users' side, holds one.

Its size: the pool's state and every rule that changes it, in one class, so
the ref and the coordinator actor hold none; how a member joins each node
is ``_pool_joining``'s.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections import deque
from typing import Any, NamedTuple

import anyio
import msgspec

from ... import (
    Actor,
    ActorContext,
    ActorRef,
    ActorStopped,
    MailboxFull,
    Terminated,
)
from ...extension import RemoteHost
from .._errors import ActorNotFound, DecodeError, FrameTooLarge
from ._node import Node
from ._pool_joining import Joined, keep_member
from ._pool_protocol import (
    FAILED,
    REPLIED,
    Check,
    Done,
    Holding,
    Jobs,
    JoinPool,
    MemberFailed,
    Returned,
)
from ._processes import NodeProcesses

__all__ = [
    "Answer",
    "Coordinator",
    "Job",
    "Member",
    "PoolCoordination",
    "Spec",
]

logger = logging.getLogger("actors.remote")

#: Bytes of job bodies per Jobs message (under the default 1 MiB max_payload).
_BATCH_BYTES = 256 * 1024
class Spec(NamedTuple):
    """What a member is made of (the JoinPool request less the coordinator)."""

    name: str
    target: str
    args: list[tuple[str, msgspec.Raw]]
    kwargs: dict[str, tuple[str, msgspec.Raw]]
    workers: int
    prefetch: int
    worker_capacity: int | None


class Answer:
    """Where an ask's outcome goes."""

    __slots__ = ("done", "error", "event", "value")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


class Job:
    __slots__ = ("answer", "batch", "body", "id", "message", "tag")

    def __init__(
        self,
        job_id: int,
        message: object,
        tag: str,
        body: msgspec.Raw,
        answer: Answer | None,
    ) -> None:
        self.id = job_id
        self.message = message
        self.tag = tag
        self.body = body
        self.answer = answer
        self.batch = 0  # the member's Jobs message count when it was sent


class Member:
    """A member of the pool on one node, as the coordinator sees it."""

    __slots__ = ("batches", "credit", "jobs", "leaving", "lost", "node", "ref")

    def __init__(
        self, node: str, ref: ActorRef[Any], credit: int, lost: anyio.Event
    ) -> None:
        self.node = node
        self.ref = ref
        self.credit = credit
        self.jobs: dict[int, Job] = {}
        self.leaving = False
        self.lost = lost
        self.batches = 0  # Jobs messages sent to it


class Coordinator(Actor):
    """The pool's actor in this process: members report to it, and it
    watches them (see the module doc)."""

    def __init__(self, pool: PoolCoordination) -> None:
        self.pool = pool

    def on_start(self) -> None:
        self.pool._started(self.context)

    def receive(self, message: Any) -> None:
        pool = self.pool
        kind = type(message)
        if kind is Done:
            pool._on_done(message)
        elif kind is Terminated:
            pool._on_lost(message.ref, message.reason)
        elif kind is Joined:
            pool._on_joined(self.context, message)
        elif kind is Returned:
            pool._on_returned(message)
        elif kind is Holding:
            pool._on_holding(message)
        elif kind is MemberFailed:
            pool._on_member_failed(message)

    async def on_stop(self) -> None:
        await self.pool._on_stop()


class PoolCoordination:
    """A pool's state and its coordinator's behaviour (see the module doc)."""

    def __init__(
        self,
        remote: Node,
        spec: Spec,
        nodes: list[str],
        capacity: int | None,
        processes: NodeProcesses | None,
        check_interval: float = 5.0,
    ) -> None:
        self.remote = remote
        self._check_interval = check_interval
        self.codec = remote.codec
        self.spec = spec
        self.join_request: JoinPool | None = None
        self.nodes = list(nodes)
        self.capacity = capacity
        self.processes = processes
        self.queue: deque[Job] = deque()
        self.members: dict[ActorRef[Any], Member] = {}
        self.ids = itertools.count(1)
        self._turn = 0
        self.room: anyio.Event | None = None
        self.changed = anyio.Event()
        self.idle: anyio.Event | None = None
        self.wake = anyio.Event()
        self.kicked = False
        self._scopes: list[anyio.CancelScope] = []
        self.alive = True
        self.context: ActorContext | None = None
        #: The coordinator actor's ref (set once it is spawned).
        self.ref: ActorRef[Any] | None = None
        #: The system the pool runs in (set when the coordinator starts).
        self.host: RemoteHost | None = None
        self.max_body = remote.max_payload - 4096
        #: Nodes that refused to join (their error), e.g. a class they do not host.
        self.errors: dict[str, BaseException] = {}
        #: Members lost soon after they joined, per node, in a row (a member
        #: whose workers cannot start): reported by an ask that times out.
        self.quick_losses: dict[str, int] = {}
        #: The last failure that ended a member, per node (its text).
        self.ended: dict[str, str] = {}
        #: Jobs told (not asked) whose handler failed on their node.
        self.failures = 0
        #: Jobs dispatched again after their member was lost.
        self.redispatched = 0
        #: Jobs reported done, per node name (since the pool started).
        self.handled: dict[str, int] = {}

    # -- the users' side: the queue -----------------------------------------------

    def job(self, message: object, answer: Answer | None) -> Job:
        """``message`` as a job (encoded now).

        Raises:
            ActorStopped: the pool has stopped.
            TypeError: its type is not registered with the codec.
            FrameTooLarge: it does not fit one NATS message.
        """
        if not self.alive:
            raise ActorStopped(f"the pool {self.name} has stopped")
        tag, body = self.codec.encode(message)
        if len(body) > self.max_body:
            raise FrameTooLarge(
                f"a message of {len(body)} bytes does not fit a frame "
                f"(at most {self.max_body})"
            )
        return Job(next(self.ids), message, tag, msgspec.Raw(body), answer)

    def full(self) -> bool:
        """Whether the queue holds ``capacity`` jobs."""
        capacity = self.capacity
        return capacity is not None and len(self.queue) >= capacity

    def enqueue(self, job: Job) -> None:
        """Queue ``job``: dispatched by the dispatcher task once the caller
        yields, so a burst of tells travels as one Jobs message per member."""
        self.queue.append(job)
        if not self.kicked:
            self.kicked = True
            self.wake.set()

    async def wait_room(self) -> None:
        """Wait until the queue has room.

        Raises:
            ActorStopped: the pool stopped meanwhile.
        """
        while self.full():
            room = self.room
            if room is None:
                room = self.room = anyio.Event()
            await room.wait()
            if not self.alive:
                raise ActorStopped(f"the pool {self.name} has stopped")

    @property
    def name(self) -> str:
        return "?" if self.ref is None else self.ref.name

    @property
    def path(self) -> str:
        return "?" if self.ref is None else self.ref.path

    def _started(self, context: ActorContext) -> None:
        if self.context is not None:
            return  # a restarted coordinator: its tasks run already
        self.context = context
        spec = self.spec
        self.join_request = JoinPool(
            context.self_ref,
            spec.name,
            spec.target,
            spec.args,
            spec.kwargs,
            spec.workers,
            spec.prefetch,
            spec.worker_capacity,
        )
        host = self.host = self.remote.host
        host.task_group.start_soon(self._dispatcher)
        host.task_group.start_soon(self._checker)
        for node in self.nodes:
            host.task_group.start_soon(keep_member, self, node)

    async def _dispatcher(self) -> None:
        scope = self.task_scope()
        if scope is None:
            return
        with scope:
            while True:
                await self.wake.wait()
                self.wake = anyio.Event()
                self.kicked = False
                self._dispatch()

    def refused(self, node: str, error: BaseException) -> None:
        """``node`` cannot join (``error`` says why): reported by
        ``wait_ready`` and by an ask that times out."""
        self.errors[node] = error
        logger.error("pool %s: node %s cannot join: %s", self.name, node, error)
        self._notify()

    def task_scope(self) -> anyio.CancelScope | None:
        """The cancel scope of a new task of the pool (cancelled when it
        stops), or None when it has stopped already."""
        if not self.alive:
            return None
        scope = anyio.CancelScope()
        self._scopes.append(scope)
        return scope

    def is_idle(self) -> bool:
        return not self.queue and not any(m.jobs for m in self.members.values())

    def _notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    def _on_joined(self, context: ActorContext, joined: Joined) -> None:
        ref = joined.ref
        if not self.alive:
            ref.stop()
            joined.lost.set()
            return
        spec = self.spec
        self.members[ref] = Member(
            joined.node, ref, spec.workers * spec.prefetch, joined.lost
        )
        context.watch(ref)
        self._dispatch()
        self._notify()

    def _on_lost(self, ref: ActorRef[Any], reason: object = None) -> None:
        member = self.members.pop(ref, None)
        if member is None:
            return
        if isinstance(reason, Exception) and not isinstance(reason, ActorNotFound):
            # A failure, not "already gone"
            self.ended[member.node] = f"{type(reason).__name__}: {reason}"[:500]
        member.lost.set()
        self._requeue(member, list(member.jobs))
        self._notify()

    def _on_member_failed(self, failed: MemberFailed) -> None:
        # Keyed by this pool's own node names only, never by what the
        # message claims alone.
        if failed.node in self.nodes:
            self.ended[failed.node] = failed.error[:500]

    def _requeue(self, member: Member, job_ids: list[int]) -> None:
        jobs = [
            member.jobs.pop(i)
            for i in sorted(job_ids, reverse=True)
            if i in member.jobs
        ]
        self.redispatched += len(jobs)
        self.queue.extendleft(jobs)  # newest first: the oldest ends first
        self._dispatch()

    def _on_holding(self, holding: Holding) -> None:
        member = self.members.get(holding.member)
        if member is None:
            return
        held = set(holding.job_ids)
        upto = holding.upto
        lost = [
            job_id
            for job_id, job in member.jobs.items()
            if job.batch <= upto and job_id not in held
        ]
        if lost:
            logger.warning(
                "pool %s: %d jobs (or their reports) to %s were lost on the "
                "wire: dispatched again",
                self.name,
                len(lost),
                member.node,
            )
            member.credit += len(lost)
            self._requeue(member, lost)

    async def _checker(self) -> None:
        """Every check interval, ask each member which jobs it holds."""
        scope = self.task_scope()
        if scope is None:
            return
        with scope:
            while True:
                await anyio.sleep(self._check_interval)
                for member in list(self.members.values()):
                    if member.jobs:
                        with contextlib.suppress(MailboxFull):
                            member.ref.tell(Check(member.batches))

    def _on_returned(self, returned: Returned) -> None:
        member = self.members.get(returned.member)
        if member is None:
            return
        member.leaving = True
        self._requeue(member, returned.job_ids)

    def _on_done(self, done: Done) -> None:
        member = self.members.get(done.member)
        if member is None:
            return  # a member already lost: its jobs went to others
        jobs = member.jobs
        codec = self.codec
        handled = 0
        for job_id, kind, tag, body in done.items:
            job = jobs.pop(job_id, None)
            if job is None:
                continue
            handled += 1
            member.credit += 1
            answer = job.answer
            if answer is None:
                if kind == FAILED:
                    self.failures += 1
                continue
            if answer.done:
                continue
            answer.done = True
            try:
                value = codec.decode(tag, body) if kind != 0 else None
            except DecodeError as exc:
                answer.error = exc
            else:
                if kind == REPLIED or not isinstance(value, BaseException):
                    answer.value = value
                else:
                    answer.error = value
            answer.event.set()
        node = member.node
        self.handled[node] = self.handled.get(node, 0) + handled
        self._dispatch()
        if self.idle is not None and self.is_idle():
            self.idle.set()
            self.idle = None

    def _dispatch(self) -> None:
        queue = self.queue
        if not queue:
            return
        ready = [m for m in self.members.values() if m.credit > 0 and not m.leaving]
        if not ready:
            return
        before = len(queue)
        # Equal credit: take turns, so single jobs spread over idle members.
        turn = self._turn = self._turn + 1
        shift = turn % len(ready)
        ready = ready[shift:] + ready[:shift]
        while queue and ready:
            ready.sort(key=lambda m: -m.credit)
            share = -(-len(queue) // len(ready))
            for member in ready:
                count = min(member.credit, share, len(queue))
                if not self._send(member, [queue.popleft() for _ in range(count)]):
                    member.credit = 0  # its buffer is full: after its next report
                if not queue:
                    break
            ready = [m for m in ready if m.credit > 0]
        room = self.room
        if room is not None and len(queue) < before:
            self.room = None
            room.set()

    def _send(self, member: Member, jobs: list[Job]) -> bool:
        """Send ``jobs`` to ``member`` in messages of at most _BATCH_BYTES;
        what cannot be sent goes back to the head of the queue."""
        chunk: list[Job] = []
        size = 0
        sent = 0
        for job in [*jobs, None]:
            length = 0 if job is None else len(job.body)
            if chunk and (job is None or size + length > _BATCH_BYTES):
                items = [(j.id, j.answer is not None, j.tag, j.body) for j in chunk]
                if not self._tell(member, items):
                    self.queue.extendleft(reversed(jobs[sent:]))
                    return False
                batch = member.batches
                for sent_job in chunk:
                    sent_job.batch = batch
                    member.jobs[sent_job.id] = sent_job
                member.credit -= len(chunk)
                sent += len(chunk)
                chunk, size = [], 0
            if job is not None:
                chunk.append(job)
                size += length
        return True

    @staticmethod
    def _tell(member: Member, items: list[Any]) -> bool:
        try:
            member.ref.tell(Jobs(items))
        except MailboxFull:
            return False
        member.batches += 1
        return True

    async def _on_stop(self) -> None:
        self.alive = False
        for scope in self._scopes:
            scope.cancel()
        stopped = ActorStopped(f"the pool {self.name} has stopped")
        host = self.host
        leftover = list(self.queue)
        self.queue.clear()
        for member in self.members.values():
            member.ref.stop()
            member.lost.set()
            leftover.extend(member.jobs.values())
            member.jobs.clear()
        self.members.clear()
        for job in leftover:
            if job.answer is not None and not job.answer.done:
                job.answer.done = True
                job.answer.error = stopped
                job.answer.event.set()
            if host is not None and self.ref is not None:
                host.dead_letter(self.ref, job.message, "pool stopped")
        room = self.room
        if room is not None:
            room.set()
        if self.idle is not None:
            self.idle.set()
        self._notify()
        if self.processes is not None:
            await self.processes.close()
