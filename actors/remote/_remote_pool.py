"""Pools across processes: workers on several nodes behind one ref.

``system.remote.spawn_pool(Worker, *args, nodes=[...])`` (or
``processes=N``: N node processes on this machine) returns a
:class:`RemotePoolRef` at once. A coordinator actor in this process holds the
pool's queue; on each node a member (see ``_agent``) runs the workers. Members
join in the background and again after their node restarts, so the pool's
capacity grows and shrinks with its nodes.

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
import itertools
import logging
import secrets
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

import anyio
import msgspec

from .. import (
    Actor,
    ActorContext,
    ActorRef,
    ActorStopped,
    AskTimeout,
    MailboxFull,
    Terminated,
)
from ._errors import ActorNotFound, DecodeError, FrameTooLarge, NodeUnreachable
from ._pool_protocol import (
    FAILED,
    REPLIED,
    Broadcast,
    Check,
    Done,
    Holding,
    Jobs,
    JoinPool,
    Returned,
    protocol_classes,
)
from ._processes import NodeProcesses
from ._spawn import (
    AGENT_NAME,
    Spawned,
    encode_args,
    module_name_of,
    module_spec_of,
    register_module_types,
    register_protocol,
    target_of,
)

if TYPE_CHECKING:
    from ._remote import Remote

__all__ = ["RemotePoolRef", "spawn_remote_pool"]

M = TypeVar("M", contravariant=True)

logger = logging.getLogger("actors.remote")

#: Bytes of job bodies per Jobs message (under the default 1 MiB max_payload).
_BATCH_BYTES = 256 * 1024
#: Seconds between attempts to join a node that is not there (doubling).
_RETRY_FIRST, _RETRY_MAX = 0.05, 1.0


class _Spec(NamedTuple):
    """What a member is made of (the JoinPool request less the coordinator)."""

    name: str
    target: str
    args: list[tuple[str, msgspec.Raw]]
    kwargs: dict[str, tuple[str, msgspec.Raw]]
    workers: int
    prefetch: int
    worker_capacity: int | None


class _Answer:
    """Where an ask's outcome goes."""

    __slots__ = ("done", "error", "event", "value")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


class _Job:
    __slots__ = ("answer", "batch", "body", "id", "message", "tag")

    def __init__(
        self,
        job_id: int,
        message: object,
        tag: str,
        body: msgspec.Raw,
        answer: _Answer | None,
    ) -> None:
        self.id = job_id
        self.message = message
        self.tag = tag
        self.body = body
        self.answer = answer
        self.batch = 0  # the member's Jobs message count when it was sent


class _Member:
    """A member of the pool on one node, as the coordinator sees it."""

    __slots__ = ("batches", "credit", "jobs", "leaving", "lost", "node", "ref")

    def __init__(
        self, node: str, ref: ActorRef[Any], credit: int, lost: anyio.Event
    ) -> None:
        self.node = node
        self.ref = ref
        self.credit = credit
        self.jobs: dict[int, _Job] = {}
        self.leaving = False
        self.lost = lost
        self.batches = 0  # Jobs messages sent to it


class _Joined(msgspec.Struct):
    """Local: a member joined (from the task that keeps a node in the pool)."""

    node: str
    ref: Any
    lost: Any


class _Coordinator(Actor):
    """The pool's actor in this process: members report to it, and it
    watches them (see the module doc)."""

    def __init__(self, pool: RemotePoolRef[Any]) -> None:
        self.pool = pool

    def on_start(self) -> None:
        self.pool._started(self.context)

    def receive(self, message: Any) -> None:
        pool = self.pool
        kind = type(message)
        if kind is Done:
            pool._on_done(message)
        elif kind is Terminated:
            pool._on_lost(message.ref)
        elif kind is _Joined:
            pool._on_joined(self.context, message)
        elif kind is Returned:
            pool._on_returned(message)
        elif kind is Holding:
            pool._on_holding(message)

    async def on_stop(self) -> None:
        await self.pool._on_stop()


class RemotePoolRef(Generic[M]):
    """One ref in front of workers on several nodes: ``tell``, ``send``,
    ``ask`` and ``broadcast`` as a local pool's, ``stop`` and ``join``.

    Messages are encoded when they are given (an unregistered type raises
    ``TypeError`` at the call) and wait in the pool's queue (``capacity``)
    until a member has credit. Jobs are at-least-once across node loss (see
    the module doc); otherwise each runs once.
    """

    def __init__(
        self,
        remote: Remote,
        spec: _Spec,
        nodes: list[str],
        capacity: int | None,
        processes: NodeProcesses | None,
        check_interval: float = 5.0,
    ) -> None:
        self._remote = remote
        self._check_interval = check_interval
        self._codec = remote.codec
        self._spec = spec
        self._request: JoinPool | None = None
        self.nodes = list(nodes)
        self.capacity = capacity
        self._processes = processes
        self._queue: deque[_Job] = deque()
        self._members: dict[ActorRef[Any], _Member] = {}
        self._ids = itertools.count(1)
        self._turn = 0
        self._room: anyio.Event | None = None
        self._changed = anyio.Event()
        self._idle: anyio.Event | None = None
        self._wake = anyio.Event()
        self._kicked = False
        self._scopes: list[anyio.CancelScope] = []
        self._alive = True
        self._context: ActorContext | None = None
        self._ref: ActorRef[Any] | None = None
        client = remote._client
        payload = client.max_payload if client is not None else 1024 * 1024
        self._max_body = payload - 4096
        #: Nodes that refused to join (their error), e.g. a class they do not host.
        self.errors: dict[str, BaseException] = {}
        #: Jobs told (not asked) whose handler failed on their node.
        self.failures = 0
        #: Jobs dispatched again after their member was lost.
        self.redispatched = 0
        #: Jobs reported done, per node name (since the pool started).
        self.handled: dict[str, int] = {}

    # -- the coordinator's side --------------------------------------------------

    def _started(self, context: ActorContext) -> None:
        self._context = context
        spec = self._spec
        self._request = JoinPool(
            context.self_ref,
            spec.name,
            spec.target,
            spec.args,
            spec.kwargs,
            spec.workers,
            spec.prefetch,
            spec.worker_capacity,
        )
        host = self._remote._host
        assert host is not None
        host.task_group.start_soon(self._dispatcher)
        host.task_group.start_soon(self._checker)
        for node in self.nodes:
            host.task_group.start_soon(self._keep, node)

    async def _dispatcher(self) -> None:
        scope = anyio.CancelScope()
        self._scopes.append(scope)
        if not self._alive:
            return
        with scope:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                self._kicked = False
                self._dispatch()

    async def _keep(self, node: str) -> None:
        """Keep a member on ``node`` while the pool lives: join it, and again
        when it is lost (the node restarted)."""
        remote = self._remote
        delay = _RETRY_FIRST
        scope = anyio.CancelScope()
        self._scopes.append(scope)
        if not self._alive:
            return
        with scope:
            while self._alive:
                try:
                    agent = await remote.lookup(node, AGENT_NAME, timeout=2.0)
                    answer = await agent.ask(self._request, timeout=10.0)
                except (NodeUnreachable, AskTimeout):
                    processes = self._processes
                    code = None if processes is None else processes.exit_code(node)
                    if code is not None:  # it will never come: say so
                        self._refused(
                            node, RuntimeError(f"node process {node} exited ({code})")
                        )
                        return
                    await anyio.sleep(delay)
                    delay = min(delay * 2, _RETRY_MAX)
                    continue
                except ActorNotFound as exc:
                    answer = exc
                if type(answer) is not Spawned:
                    error = answer if isinstance(answer, BaseException) else None
                    self._refused(node, error or RuntimeError(repr(answer)))
                    return
                delay = _RETRY_FIRST
                lost = anyio.Event()
                assert self._ref is not None
                self._ref.tell(_Joined(node, answer.ref, lost))
                await lost.wait()

    def _refused(self, node: str, error: BaseException) -> None:
        self.errors[node] = error
        logger.error("pool %s: node %s cannot join: %s", self.name, node, error)
        self._notify()

    def _is_idle(self) -> bool:
        return not self._queue and not any(m.jobs for m in self._members.values())

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _on_joined(self, context: ActorContext, joined: _Joined) -> None:
        ref = joined.ref
        if not self._alive:
            ref.stop()
            joined.lost.set()
            return
        spec = self._spec
        self._members[ref] = _Member(
            joined.node, ref, spec.workers * spec.prefetch, joined.lost
        )
        context.watch(ref)
        self._dispatch()
        self._notify()

    def _on_lost(self, ref: ActorRef[Any]) -> None:
        member = self._members.pop(ref, None)
        if member is None:
            return
        member.lost.set()
        self._requeue(member, list(member.jobs))
        self._notify()

    def _requeue(self, member: _Member, job_ids: list[int]) -> None:
        jobs = [
            member.jobs.pop(i)
            for i in sorted(job_ids, reverse=True)
            if i in member.jobs
        ]
        self.redispatched += len(jobs)
        self._queue.extendleft(jobs)  # newest first: the oldest ends first
        self._dispatch()

    def _on_holding(self, holding: Holding) -> None:
        member = self._members.get(holding.member)
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
        scope = anyio.CancelScope()
        self._scopes.append(scope)
        if not self._alive:
            return
        with scope:
            while True:
                await anyio.sleep(self._check_interval)
                for member in list(self._members.values()):
                    if member.jobs:
                        with contextlib.suppress(MailboxFull):
                            member.ref.tell(Check(member.batches))

    def _on_returned(self, returned: Returned) -> None:
        member = self._members.get(returned.member)
        if member is None:
            return
        member.leaving = True
        self._requeue(member, returned.job_ids)

    def _on_done(self, done: Done) -> None:
        member = self._members.get(done.member)
        if member is None:
            return  # a member already lost: its jobs went to others
        jobs = member.jobs
        codec = self._codec
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
        if self._idle is not None and self._is_idle():
            self._idle.set()
            self._idle = None

    def _dispatch(self) -> None:
        queue = self._queue
        if not queue:
            return
        ready = [m for m in self._members.values() if m.credit > 0 and not m.leaving]
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
        room = self._room
        if room is not None and len(queue) < before:
            self._room = None
            room.set()

    def _send(self, member: _Member, jobs: list[_Job]) -> bool:
        """Send ``jobs`` to ``member`` in messages of at most _BATCH_BYTES;
        what cannot be sent goes back to the head of the queue."""
        chunk: list[_Job] = []
        size = 0
        sent = 0
        for job in [*jobs, None]:
            length = 0 if job is None else len(job.body)
            if chunk and (job is None or size + length > _BATCH_BYTES):
                items = [(j.id, j.answer is not None, j.tag, j.body) for j in chunk]
                if not self._tell(member, items):
                    self._queue.extendleft(reversed(jobs[sent:]))
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
    def _tell(member: _Member, items: list[Any]) -> bool:
        try:
            member.ref.tell(Jobs(items))
        except MailboxFull:
            return False
        member.batches += 1
        return True

    async def _on_stop(self) -> None:
        self._alive = False
        for scope in self._scopes:
            scope.cancel()
        stopped = ActorStopped(f"the pool {self.name} has stopped")
        host = self._remote._host
        leftover = list(self._queue)
        self._queue.clear()
        for member in self._members.values():
            member.ref.stop()
            member.lost.set()
            leftover.extend(member.jobs.values())
            member.jobs.clear()
        self._members.clear()
        for job in leftover:
            if job.answer is not None and not job.answer.done:
                job.answer.done = True
                job.answer.error = stopped
                job.answer.event.set()
            if host is not None and self._ref is not None:
                host.dead_letter(self._ref, job.message, "pool stopped")
        room = self._room
        if room is not None:
            room.set()
        if self._idle is not None:
            self._idle.set()
        self._notify()
        if self._processes is not None:
            await self._processes.close()

    # -- the users' side -----------------------------------------------------------

    def _job(self, message: object, answer: _Answer | None) -> _Job:
        if not self._alive:
            raise ActorStopped(f"the pool {self.name} has stopped")
        tag, body = self._codec.encode(message)
        if len(body) > self._max_body:
            raise FrameTooLarge(
                f"a message of {len(body)} bytes does not fit a frame "
                f"(at most {self._max_body})"
            )
        return _Job(next(self._ids), message, tag, msgspec.Raw(body), answer)

    def _full(self) -> bool:
        capacity = self.capacity
        return capacity is not None and len(self._queue) >= capacity

    def _enqueue(self, job: _Job) -> None:
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
        """As :meth:`tell`, waiting for room in the queue (backpressure).

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as :meth:`tell`.
        """
        job = self._job(message, None)
        await self._wait_room()
        self._enqueue(job)

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        """Ask one worker; its reply (decoded), within ``timeout`` seconds
        (waiting for room in the queue included).

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as :meth:`tell`
                (``ActorStopped`` also when the pool stops before the reply).
            AskTimeout: no reply in time; its message says when the pool had
                no live worker.
            Exception: the handler's exception (as ``RemoteRef.ask``).
        """
        answer = _Answer()
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
            raise AskTimeout(
                f"the pool {self.name} has no live worker (nodes: "
                f"{', '.join(self.nodes)}); no reply within {timeout} s"
            )
        raise AskTimeout(f"the pool {self.name} did not reply within {timeout} s")

    def broadcast(self, message: M) -> None:
        """Tell every worker of every live member ``message``.

        Raises:
            TypeError, FrameTooLarge, ActorStopped: as :meth:`tell`.
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
            SpawnError / Exception: a node refused to join (e.g. it does not
                host the class); the error it answered.
            TimeoutError: fewer members after ``timeout`` seconds.
            ActorStopped: the pool has stopped.
        """
        wanted = len(self.nodes) if members is None else members
        with anyio.fail_after(timeout):
            while True:
                if self.errors:
                    raise next(iter(self.errors.values()))
                if not self._alive:
                    raise ActorStopped(f"the pool {self.name} has stopped")
                if len(self._members) >= wanted:
                    return
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

    @property
    def name(self) -> str:
        return "?" if self._ref is None else self._ref.name

    @property
    def path(self) -> str:
        return "?" if self._ref is None else self._ref.path

    def __repr__(self) -> str:
        return (
            f"<RemotePoolRef {self.path} members={len(self._members)} "
            f"queued={len(self._queue)}>"
        )


def spawn_remote_pool(
    remote: Remote,
    factory: type[Actor] | str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    nodes: Sequence[str] | None,
    processes: int | None,
    workers: int,
    prefetch: int,
    capacity: int | None,
    worker_capacity: int | None,
    name: str | None,
    grace: float,
    check_interval: float = 5.0,
) -> RemotePoolRef[Any]:
    """See :meth:`Remote.spawn_pool`."""
    for option, value in (("workers", workers), ("prefetch", prefetch)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{option} must be an int, not {value!r}")
        if value < 1:
            raise ValueError(f"{option} must be at least 1, not {value}")
    for option, limit in (("capacity", capacity), ("worker_capacity", worker_capacity)):
        if limit is None:
            continue
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"{option} must be an int or None, not {limit!r}")
        if limit < 1:
            raise ValueError(f"{option} must be at least 1, not {limit}")
    if (nodes is None) == (processes is None):
        raise ValueError("give either nodes (node names) or processes (a count)")
    if processes is not None and (
        isinstance(processes, bool) or not isinstance(processes, int) or processes < 1
    ):
        raise ValueError(f"processes must be an int >= 1, not {processes!r}")
    if nodes is not None and (
        isinstance(nodes, str) or not all(type(n) is str for n in nodes) or not nodes
    ):
        raise TypeError("nodes must be a non-empty list of node names")
    nodes = None if nodes is None else list(nodes)
    address = remote.node  # raises SystemNotRunning
    host = remote._host
    assert host is not None
    target, module = target_of(factory)
    codec = remote.codec
    register_protocol(codec, *protocol_classes())
    if module is not None:
        register_module_types(codec, module, module_name_of(module))
    encoded_args, encoded_kwargs = encode_args(codec, args, kwargs)
    if name is None:
        base = target.rpartition(":")[2].lower()
        name = f"pool-{base}-{secrets.token_hex(3)}"
    started: NodeProcesses | None = None
    if processes is not None:
        spec = (
            module_spec_of(module) if module is not None else target.partition(":")[0]
        )
        nodes = [f"{address.node}-{name}-{i}"[:64] for i in range(processes)]
        started = NodeProcesses(
            remote.url,
            system=remote.system_name,
            prefix=remote.prefix,
            names=nodes,
            modules=[spec],
            grace=grace,
        )
    assert nodes is not None
    try:
        pool: RemotePoolRef[Any] = RemotePoolRef(
            remote,
            _Spec(
                name,
                target,
                encoded_args,
                encoded_kwargs,
                workers,
                prefetch,
                worker_capacity,
            ),
            nodes,
            capacity,
            started,
            check_interval,
        )
        pool._ref = host.system.spawn(_Coordinator, pool, name=name)
    except BaseException:
        if started is not None:
            started.kill()
        raise
    return pool
