"""Group commit: the writes of many actors, made while one batch is being
committed, go into the next batch together (LevelDB's writer queue, MySQL's
binlog group commit).

No background task: the first writer to find the committer idle is the
*leader*; it lets the event loop run once (writers about to run join it), then
takes every write queued so far (up to ``max_batch``) and commits them with one
call of ``commit`` in a worker thread (one transaction, one fsync). Writers
that arrive meanwhile queue and wait. When the batch is done, the leader wakes
its writers with their outcomes and hands the lead to the oldest write still
queued, whose task commits the next batch, and so on. So an idle journal
commits a lone write after one scheduling round, and a busy one commits as
many writes per transaction as arrived during the previous one, with no timer
and no task to start or stop.

Cancellation: a writer cancelled while its write is still queued takes it out
of the queue (nothing is written, and the caller learns nothing was). Once
its write is in a batch the commit runs to its end (the worker thread cannot
be interrupted, and the leader's part runs shielded), so a cancelled
writer's write may be stored: as for any write whose acknowledgement was
lost. A leader never leaves the queue without a leader.

Everything but ``commit`` runs in the event loop's thread; a committer
belongs to one event loop at a time (it keeps no loop object between
batches).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

__all__ = ["GroupCommit", "Write"]


class Write:
    """One write waiting for (or in) a batch; ``commit`` sets its outcome:
    ``result``, or ``error`` (raised to its writer)."""

    __slots__ = ("done", "error", "event", "lead", "result", "taken")

    def __init__(self) -> None:
        #: In a batch (being committed, or committed).
        self.taken = False
        #: Its batch is committed: ``result`` or ``error`` is final.
        self.done = False
        #: Its task was handed the lead: it commits the next batch.
        self.lead = False
        self.error: BaseException | None = None
        self.result: Any = None
        self.event: anyio.Event | None = None

    def _wake(self) -> None:
        event = self.event
        if event is not None:
            event.set()


W = TypeVar("W", bound=Write)


class GroupCommit(Generic[W]):
    """Batches writes into calls of ``commit(batch)`` in a worker thread.

    Args:
        commit: called with a list of writes in a worker thread; it sets each
            write's ``result`` or ``error`` (an exception it raises becomes
            the error of every write of the batch that has none).
        max_batch: the most writes per batch (>= 1).
        limiter: returns the capacity limiter for the worker thread (None:
            anyio's default).
    """

    def __init__(
        self,
        commit: Callable[[list[W]], None],
        max_batch: int = 1000,
        limiter: Callable[[], anyio.CapacityLimiter] | None = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self._commit = commit
        self._max_batch = max_batch
        self._limiter = limiter
        self._queue: deque[W] = deque()
        self._busy = False
        #: The running backend's Event class, learnt when a busy spell begins
        #: (anyio.Event() looks the backend up at every call; its class
        #: makes one without).
        self._event: Callable[[], anyio.Event] = anyio.Event
        self._idle: anyio.Event | None = None
        #: Batches committed, and writes in them (for tests and statistics).
        self.batches = 0
        self.writes = 0

    @property
    def busy(self) -> bool:
        """Whether a batch is being committed (or a leader is about to)."""
        return self._busy

    async def submit(self, write: W) -> Any:
        """Queue ``write``, wait for its batch, and return its result.

        Raises:
            BaseException: the write's ``error``.
        """
        self._queue.append(write)
        if self._busy:
            write.event = self._event()
            try:
                await write.event.wait()
            except BaseException:
                if write.lead and not write.done:
                    # Handed the lead as it was cancelled: commit first.
                    with anyio.CancelScope(shield=True):
                        await self._lead()
                elif not write.taken:
                    # Still queued: nothing of it is written.
                    self._queue.remove(write)
                # Else its batch is being committed: it may be stored.
                raise
            if not write.done:
                assert write.lead
                await self._lead()
        else:
            self._busy = True
            self._event = type(anyio.Event())
            write.lead = True
            with anyio.CancelScope(shield=True):
                await self._lead()
        if write.error is not None:
            raise write.error
        return write.result

    async def _lead(self) -> None:
        """Commit the queued writes (this task's own among them), then hand
        the lead on."""
        queue = self._queue
        # A gather window of one scheduling round: writers the event loop is
        # about to run (woken by the batch before, or arriving with this one)
        # join this batch instead of waiting a whole commit for the next.
        await anyio.lowlevel.cancel_shielded_checkpoint()
        batch: list[W] = []
        take = min(len(queue), self._max_batch)
        for _ in range(take):
            write = queue.popleft()
            write.taken = True
            batch.append(write)
        try:
            limiter = None if self._limiter is None else self._limiter()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._run, batch, limiter=limiter)
        finally:
            self.batches += 1
            self.writes += len(batch)
            for write in batch:
                write.done = True
                write._wake()
            if queue:
                successor = queue[0]
                successor.lead = True
                successor._wake()
            else:
                self._busy = False
                idle = self._idle
                if idle is not None:
                    self._idle = None
                    idle.set()

    def _run(self, batch: list[W]) -> None:
        try:
            self._commit(batch)
        except BaseException as exc:
            for write in batch:
                if write.error is None:
                    write.error = exc
            if not isinstance(exc, Exception):
                raise

    async def wait_idle(self) -> None:
        """Return once no batch is being committed and none is queued."""
        while self._busy:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()
