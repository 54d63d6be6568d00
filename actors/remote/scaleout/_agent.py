"""The node's side of remote spawn and of pools across processes: the agent
actor that spawns what other nodes ask for, and a pool's member.

The agent (registered as ``actors.node``) answers ``SpawnRequest`` by spawning
the class as its own child, so the actor is supervised on its node (restarted
by the agent's strategy), and answers ``JoinPool`` by spawning a
``PoolMember``. A refusal is answered as an exception value, never raised
in the agent: a bad request must not restart it (and its children).

A member spawns its workers (children, restarted on failure) and runs one
task per worker that takes the next job from the member's queue and asks its
worker (so an idle worker pulls), and one task that reports what finished to
the coordinator in batches (each report gives the credits back).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from ... import (
    Actor,
    ActorRef,
    Backoff,
    ErrorReply,
    MailboxFull,
    OneForOne,
    Terminated,
)
from ...channel import (
    ClosedResourceError,
    EndOfStream,
    WouldBlock,
    create_memory_object_stream,
)
from ...extension import LocalAsk
from .._errors import DecodeError, SpawnError
from ._hosting import Hosted, register_module_types
from ._node import Node
from ._pool_protocol import (
    DONE,
    FAILED,
    MAX_PREFETCH,
    MAX_WORKERS,
    REPLIED,
    Broadcast,
    Check,
    Done,
    Holding,
    Jobs,
    JoinPool,
    Leave,
    MemberFailed,
    Returned,
    protocol_classes,
)
from ._spawn import (
    AGENT_NAME,
    MAX_REMOTE_CAPACITY,
    SpawnReply,
    SpawnRequest,
    Unspawn,
    check_remote_request,
    decode_args,
    decode_value,
    register_protocol,
)

if TYPE_CHECKING:
    from ... import ActorSystem

__all__ = ["NodeAgent", "PoolMember", "start_agent"]

#: The encoded ``nil`` body of a job that finished without a reply.
_NIL = msgspec.Raw(b"\xc0")
#: Spawns an agent remembers for an Unspawn.
_SPAWN_TOKENS = 1024
#: Bytes of bodies per report to the coordinator (well under the server's
#: default ``max_payload`` of 1 MiB).
_REPORT_BYTES = 256 * 1024


def _with_kwargs(cls: type[Actor], kwargs: dict[str, Any]) -> Callable[..., Actor]:
    # A context's spawn takes positional arguments only (it is typed by
    # them): keyword arguments ride on the factory.
    return functools.partial(cls, **kwargs) if kwargs else cls


def _remote_of(actor: Actor) -> Node:
    remote: Node = actor.context.system.remote
    return remote


#: The agent's strategy. Its children are independent actors of many
#: spawners, so one that fails again and again must not exceed the agent's
#: restart intensity (which would stop every actor on the node): restarts
#: back off (10 ms doubling to 1 s per child), and the intensity is set far
#: above what a few crash-looping children reach (about 10 restarts each in
#: 10 s).
AGENT_STRATEGY = OneForOne(
    max_restarts=500, within=10.0, backoff=Backoff(min_delay=0.01, max_delay=1.0)
)


class NodeAgent(Actor):
    """Spawns the hosted classes other nodes ask for (see the module doc).

    Args:
        hosted: the classes this node may construct.
    """

    supervisor_strategy = AGENT_STRATEGY

    def __init__(self, hosted: Hosted) -> None:
        self.hosted = hosted
        self.pools = 0
        #: Live pool members, to their coordinators (pruned as they stop).
        self.members: dict[ActorRef[Any], ActorRef[Any]] = {}
        #: The latest spawns by their request's token, for an Unspawn (which
        #: comes right after its SpawnRequest when it comes at all).
        self.spawned: OrderedDict[str, ActorRef[Any]] = OrderedDict()

    async def receive(self, message: Any) -> Any:
        kind = type(message)
        if kind is SpawnRequest or kind is JoinPool:
            try:
                return self._spawn(message)
            except (SpawnError, TypeError, ValueError) as exc:
                return exc  # an answer, not a failure of the agent
            except Exception as exc:
                # The class's constructor raised: the spawner's failure (as a
                # local spawn raises it), not the agent's, whose failure would
                # stop every actor of the node.
                return ErrorReply(exc)
        if kind is Unspawn:
            ref = self.spawned.pop(message.token, None)
            if ref is not None:
                ref.stop()
            return None
        if kind is Leave:
            await self._leave(message)
            return None
        if kind is Terminated:
            self._member_ended(message)
            return None
        return SpawnError(f"the node agent does not understand {kind.__name__}")

    def _spawn(self, message: SpawnRequest | JoinPool) -> SpawnReply:
        # The options from the network first: bounded before anything acts.
        if type(message) is SpawnRequest:
            check_remote_request(message)
        else:
            assert type(message) is JoinPool
            capacity = message.capacity
            if len(message.pool) > 256 or not (
                capacity is None or 1 <= capacity <= MAX_REMOTE_CAPACITY
            ):
                raise SpawnError("a pool's name or capacity out of range")
        cls = self.hosted.resolve(message.target)
        codec = _remote_of(self).codec
        try:
            args, kwargs = decode_args(codec, message.args, message.kwargs)
        except DecodeError as exc:
            raise SpawnError(f"{message.target}: bad arguments: {exc}") from None
        context = self.context
        if type(message) is SpawnRequest:
            ref = context.spawn(
                _with_kwargs(cls, kwargs),
                *args,
                name=message.name,
                capacity=message.capacity,
                drain=message.drain,
                restart=message.restart,  # type: ignore[arg-type]
            )
            if message.token is not None:
                self.spawned[message.token] = ref
                if len(self.spawned) > _SPAWN_TOKENS:
                    self.spawned.popitem(last=False)
        else:
            assert type(message) is JoinPool
            if not (
                1 <= message.workers <= MAX_WORKERS
                and 1 <= message.prefetch <= MAX_PREFETCH
            ):
                raise SpawnError("workers or prefetch out of range")
            self.pools += 1
            ref = context.spawn(
                PoolMember,
                message,
                cls,
                args,
                kwargs,
                name=f"{message.pool}-{self.pools}",
                restart="temporary",
            )
            self.members[ref] = message.coordinator
            self.context.watch(ref)
        return SpawnReply(ref)

    def _member_ended(self, message: Terminated) -> None:
        coordinator = self.members.pop(message.ref, None)
        reason = message.reason
        if coordinator is None or not isinstance(reason, Exception):
            return  # not a member, or it stopped without a failure
        error = f"{type(reason).__name__}: {reason}"[:500]
        node = _remote_of(self).node_name
        # A full or gone coordinator: its pool learns of the loss anyway
        # (its watch), just not why.
        with contextlib.suppress(MailboxFull):
            coordinator.tell(MemberFailed(message.ref, node, error))

    async def _leave(self, message: Leave) -> None:
        members = [member for member in self.members if member.is_alive]
        with anyio.move_on_after(message.grace + 1.0):
            for member in members:
                member.tell(message)
            for member in members:
                await member.join()


class PoolMember(Actor):
    """A pool's workers on this node (see the module doc)."""

    def __init__(
        self,
        request: JoinPool,
        factory: type[Actor],
        args: list[Any],
        kwargs: dict[str, Any],
    ) -> None:
        self.request = request
        self.factory = factory
        self.args = args
        self.kwargs = kwargs
        self.coordinator = request.coordinator
        self.workers: list[ActorRef[Any]] = []
        self._done: list[tuple[int, int, str, msgspec.Raw]] = []
        #: Jobs held: received and not yet reported (or handed back).
        self._held: set[int] = set()
        self._report = anyio.Event()
        #: The reporter was woken and has not taken the batch yet (so a
        #: finished job sets the event once per report, not once per job).
        self._report_due = False
        #: Jobs received and not yet taken by a worker's feeder.
        self._queued = 0
        self._running = 0
        self._idle: anyio.Event | None = None
        self._scope = anyio.CancelScope()
        self._report_every = max(1, request.workers * request.prefetch // 4)
        # Spawned here, so a worker's constructor that raises fails the
        # member's spawn in the agent: the coordinator gets the error (and
        # stops asking that node) instead of a member that dies at once.
        context = self.context
        self.workers = [
            context.spawn(
                _with_kwargs(factory, kwargs),
                *args,
                name=f"worker-{index}",
                capacity=request.capacity,
            )
            for index in range(request.workers)
        ]

    def on_start(self) -> None:
        remote = _remote_of(self)
        self._codec = remote.codec
        host = remote.host
        self._host = host
        self._jobs, self._queue = create_memory_object_stream[
            tuple[int, bool, str, msgspec.Raw]
        ](math.inf)
        host.task_group.start_soon(self._run)
        # A coordinator gone without a goodbye (its process killed, or the
        # pool stopped while this member was joining) has no use for it.
        self.context.watch(self.coordinator)

    def on_stop(self) -> None:
        self._scope.cancel()
        self._jobs.close()

    async def receive(self, message: Any) -> None:
        kind = type(message)
        if kind is Jobs:
            jobs = self._jobs
            returned = []
            held = self._held
            for item in message.items:
                try:
                    jobs.send_nowait(item)
                    held.add(item[0])
                    self._queued += 1
                except (ClosedResourceError, anyio.BrokenResourceError):
                    returned.append(item[0])  # leaving: hand it back
            if returned:
                # A full buffer to the coordinator: its check finds them.
                with contextlib.suppress(MailboxFull):
                    self.coordinator.tell(Returned(self.context.self_ref, returned))
        elif kind is Broadcast:
            try:
                value = decode_value(self._codec, (message.tag, message.body))
            except DecodeError:
                return
            for worker in self.workers:
                try:
                    worker.tell(value)
                except Exception:
                    host = self._host
                    host.dead_letter(worker, value, "worker full or stopped")
        elif kind is Check:
            # A full buffer to the coordinator: it checks again later.
            with contextlib.suppress(MailboxFull):
                self.coordinator.tell(
                    Holding(self.context.self_ref, message.upto, list(self._held))
                )
        elif kind is Leave:
            await self._leave(message.grace)
            self.context.stop()
        elif kind is Terminated and message.ref == self.coordinator:
            self.context.stop()

    # -- the tasks -------------------------------------------------------------

    async def _run(self) -> None:
        with self._scope:
            async with anyio.create_task_group() as tg:
                for index in range(len(self.workers)):
                    tg.start_soon(self._work, index, self._queue.clone())
                tg.start_soon(self._reporter)

    async def _work(self, index: int, queue: Any) -> None:
        """Feed worker ``index``: take up to half its credits' worth of jobs
        at once (an idle worker pulls), enqueue them all as asks (the worker
        drains them in one wake), and record each outcome as it comes. The
        other half stays queued here while those run, so the round trip that
        brings more work is hidden behind work."""
        codec = self._codec
        host = self._host
        worker = self.workers[index]
        limit = max(1, self.request.prefetch // 2)
        async with queue:
            while True:
                try:
                    batch = await queue.receive_many(limit)
                except (EndOfStream, ClosedResourceError):
                    return
                self._running += len(batch)
                self._queued -= len(batch)
                asked: list[tuple[int, bool, LocalAsk | Exception]] = []
                for job_id, wants_reply, tag, body in batch:
                    try:
                        message = codec.decode(tag, body)
                        asked.append(
                            (job_id, wants_reply, host.ask_nowait(worker, message))
                        )
                    except Exception as exc:
                        asked.append((job_id, wants_reply, exc))
                done = self._done
                for job_id, wants_reply, local in asked:
                    try:
                        if isinstance(local, Exception):
                            raise local
                        value = await local.result(None)
                    except Exception as exc:
                        error_tag, data = codec.encode_error(exc)
                        outcome = (job_id, FAILED, error_tag, msgspec.Raw(data))
                    else:
                        # A tell's outcome inline (the tiny job's path: a
                        # call saved per job); a reply is encoded.
                        if wants_reply:
                            outcome = self._outcome(job_id, value)
                        else:
                            outcome = (job_id, DONE, "", _NIL)
                    finally:
                        self._running -= 1
                    # _finished() inlined: report in batches, a quarter of
                    # the window at a time, or whenever this member has
                    # nothing left to start (its credits are needed now);
                    # the reporter is woken once per report.
                    done.append(outcome)
                    if not self._report_due and (
                        len(done) >= self._report_every or not self._queued
                    ):
                        self._report_due = True
                        self._report.set()
                    if not self._running and self._idle is not None:
                        self._idle.set()

    def _outcome(self, job_id: int, value: object) -> tuple[int, int, str, msgspec.Raw]:
        """The outcome of an asked job that returned ``value``: its reply,
        or the encoding error."""
        codec = self._codec
        try:
            tag, data = codec.encode(value)
        except TypeError as exc:
            tag, data = codec.encode_error(exc)
            return (job_id, FAILED, tag, msgspec.Raw(data))
        return (job_id, REPLIED, tag, msgspec.Raw(data))

    async def _reporter(self) -> None:
        while True:
            await self._report.wait()
            self._report = anyio.Event()
            self._report_due = False
            await self._send_done()

    async def _send_done(self) -> None:
        me = self.context.self_ref
        done = self._done
        while done:
            size = count = 0
            for entry in done:
                n = len(entry[3])
                if count and size + n > _REPORT_BYTES:
                    break
                size += n
                count += 1
            items = done[:count]
            del done[:count]
            await self.coordinator.send(Done(me, items))
            # Held until sent: a Holding answered meanwhile still lists them.
            self._held.difference_update([item[0] for item in items])

    async def _leave(self, grace: float) -> None:
        returned = []
        while True:
            try:
                returned.append(self._queue.receive_nowait()[0])
                self._queued -= 1
            except (WouldBlock, EndOfStream, ClosedResourceError):
                break
        self._jobs.close()
        me = self.context.self_ref
        if returned:
            self._held.difference_update(returned)
            await self.coordinator.send(Returned(me, returned))
        with anyio.move_on_after(grace):
            if self._running:
                self._idle = anyio.Event()
                await self._idle.wait()
        await self._send_done()


def start_agent(system: ActorSystem, hosted: Hosted) -> ActorRef[Any]:
    """Spawn the node agent in ``system`` (a system with a remote layer) and
    register it as ``AGENT_NAME``; register the spawn and pool messages
    and the hosted modules' message classes on its codec.

    Raises:
        TypeError: ``system`` has no remote layer.
        SystemNotRunning: the system is not entered.
    """
    remote = system.remote
    if remote is None or not hasattr(remote, "codec"):
        raise TypeError("the node agent needs a system with a remote layer")
    register_protocol(remote.codec, *protocol_classes())
    for name, module in hosted.modules.items():
        register_module_types(remote.codec, module, name)
    ref = system.spawn(NodeAgent, hosted, name="node-agent")
    remote.register(AGENT_NAME, ref)
    remote.protect(ref)  # no remote stop of the agent (docs/remote.md)
    return ref
