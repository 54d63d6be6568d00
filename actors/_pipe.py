"""Work an actor starts without waiting for it: ``context.run`` and
``context.ask`` (Akka's ``pipeTo`` and ``context.ask`` with a reply adapter).

Each piece of work runs in its own task in the system's task group, under a
cancel scope owned by the actor's incarnation (``ActorTasks``, in the
cell's extras): a restart or a stop of the actor cancels it and waits for it
to end before ``on_stop`` runs, so the work never outlives the incarnation
that started it (structured concurrency).

Its outcome, a [``Result``][actors.Result], comes back to the actor as a signal in its
mailbox (``Piped``): outside the quota, so a full mailbox never refuses
it, and in FIFO order with the messages. When it reaches the front of the
mailbox, inside the actor's own task, ``then(result)`` makes the message that
``receive`` gets (the result itself without ``then``). Nothing is lost
silently: an outcome that arrives when the actor has stopped, or after the
incarnation that started the work was replaced, is a dead letter.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, final

import anyio

from ._invoke import call_handler, stray_failure
from ._lifecycle import current_cell
from .mailbox import MailboxClosed, Signal

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = [
    "ActorTasks",
    "Piped",
    "Result",
    "cancel_tasks",
    "check_job",
    "end_tasks",
    "start",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@final
class Result(Generic[T_co]):
    """The outcome of work an actor piped to itself (``context.run``,
    ``context.ask``): a value, or the exception the work raised.

    ``ok`` tells them apart (a work may well return an exception instance as
    its value): when it is True, ``value`` is the value; when it is False,
    ``error`` is the exception and ``value`` raises it (as
    ``concurrent.futures.Future.result()`` does).

    Results compare equal when their values (or their exceptions, by
    identity) do. In a ``match``, test ``ok`` before ``value``:
    ``case Result(ok=True, value=v)``.
    """

    __slots__ = ("_error", "_value")

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        """A result holding ``value``, or, when ``error`` is given, the
        exception ``error``.

        Raises:
            TypeError: ``error`` is neither None nor an exception instance.
        """
        if error is not None and not isinstance(error, BaseException):
            raise TypeError(f"error must be an exception or None, not {error!r}")
        self._value = value
        self._error = error

    @staticmethod
    def success(value: T) -> Result[T]:
        """A result holding ``value``."""
        return Result(value)

    @staticmethod
    def failure(error: BaseException) -> Result[Any]:
        """A result holding the exception ``error``.

        Raises:
            TypeError: ``error`` is not an exception instance.
        """
        if not isinstance(error, BaseException):
            raise TypeError(f"error must be an exception, not {error!r}")
        return Result(None, error)

    @property
    def ok(self) -> bool:
        """Whether the work returned (True) or raised (False)."""
        return self._error is None

    @property
    def value(self) -> T_co:
        """The work's value.

        Raises:
            BaseException: the work's exception, when it raised (``ok`` is
                False).
        """
        error = self._error
        if error is not None:
            raise error
        return self._value  # type: ignore[no-any-return]

    @property
    def error(self) -> BaseException | None:
        """The work's exception, or None when it returned."""
        return self._error

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        if self._error is not None or other._error is not None:
            return self._error is other._error
        return bool(self._value == other._value)

    __hash__ = None  # type: ignore[assignment]  # the value may not hash

    def __repr__(self) -> str:
        if self._error is not None:
            return f"Result(error={self._error!r})"
        return f"Result({self._value!r})"


class _Job:
    """One piece of work: its cancel scope and what comes after it."""

    __slots__ = ("call", "incarnation", "scope", "started", "then", "work")

    def __init__(
        self,
        work: Callable[[], Awaitable[Any]] | Awaitable[Any] | None,
        then: Callable[[Result[Any]], object] | None,
        incarnation: int,
    ) -> None:
        self.work = work
        #: ``work`` is to be called (it is not an awaitable itself).
        self.call = not inspect.isawaitable(work)
        self.then = then
        self.incarnation = incarnation
        self.scope = anyio.CancelScope()
        self.started = False


class ActorTasks:
    """The work an actor's incarnation runs in the background (in the cell's
    extras, made by the first ``context.run`` or ``context.ask``)."""

    __slots__ = ("_idle", "ending", "jobs")

    def __init__(self) -> None:
        self.jobs: set[_Job] = set()
        self._idle: anyio.Event | None = None
        #: The incarnation's work is being ended (``end``): a job started
        #: meanwhile (by a job's cleanup, say) is cancelled at once.
        self.ending = False

    def cancel_all(self) -> None:
        """Cancel every job."""
        for job in self.jobs:
            _cancel(job)

    def _done(self, job: _Job) -> None:
        self.jobs.discard(job)
        idle = self._idle
        if not self.jobs and idle is not None:
            self._idle = None
            idle.set()

    async def end(self) -> None:
        """Cancel every job, and those started meanwhile, and wait until
        they have all ended."""
        self.ending = True
        try:
            self.cancel_all()
            while self.jobs:
                idle = self._idle
                if idle is None:
                    idle = self._idle = anyio.Event()
                await idle.wait()
        finally:
            self.ending = False


def _cancel(job: _Job) -> None:
    """Cancel ``job``. A job whose task has not run yet never will run its
    work: a coroutine object given to ``run`` is closed here, so it is never
    left un-awaited."""
    job.scope.cancel()
    if not job.started:
        work, job.work = job.work, None
        close = getattr(work, "close", None)
        if inspect.iscoroutine(work) and close is not None:
            close()


class Piped(Signal):
    """The outcome of a job on its way to the actor (a mailbox signal)."""

    __slots__ = ("handed", "incarnation", "message", "result", "then")

    def __init__(
        self,
        result: Result[Any],
        then: Callable[[Result[Any]], object] | None,
        incarnation: int,
    ) -> None:
        self.result = result
        self.then = then
        self.incarnation = incarnation
        #: What the handler gets: the result, then ``then(result)`` once
        #: ``then`` has run (what a stash keeps, a failure's dead letter).
        self.message: object = result
        #: Whether ``then`` has run (the result is the handler's message).
        self.handed = False

    def __repr__(self) -> str:
        return f"Piped({self.result!r})"

    async def deliver(self, cell: Cell, receive: Any) -> None:
        """Called by the actor's task when the signal reaches the front of the
        mailbox: ``then(result)`` (or the result) to ``receive``, unless the
        incarnation that started the work has ended (then a dead letter:
        ``then`` belongs to the old instance)."""
        if self.incarnation != cell.incarnation:
            cell.runtime.dead_letter(cell, self.result, "incarnation ended")
            return
        then = self.then
        message = self.result if then is None else then(self.result)
        if then is not None and inspect.iscoroutine(message):
            message.close()  # never left un-awaited
            raise TypeError(
                f"then ({then!r}) returned a coroutine: it must be a sync "
                "function that makes the message receive gets (await in "
                "receive instead)"
            )
        self.message = message  # what the handler got (a stash keeps it)
        self.handed = True
        await call_handler(receive, message)

    def undelivered(self, cell: Cell) -> None:
        """The actor stopped with this signal still queued (a dead letter: the
        result), or while its handler ran (a teardown cancelled it: the dead
        letter is what the handler got, ``then`` has taken the result)."""
        message = self.message if self.handed else self.result
        cell.runtime.dead_letter(cell, message, "actor stopped")


def check_job(work: object, then: object) -> None:
    """The arguments of ``context.run`` (and ``context.ask``'s ``then``):
    one home for the rule, the runtime's context and the BehaviorTestKit's.
    A coroutine object refused is closed (never left un-awaited).

    Raises:
        TypeError: ``work`` is neither awaitable nor callable, or ``then`` is
            neither None nor a sync function (an ``async def`` makes a
            coroutine, not the message ``receive`` gets).
    """
    error: TypeError | None = None
    if not inspect.isawaitable(work) and not callable(work):
        error = TypeError(
            f"work must be an async function or an awaitable, not {work!r}"
        )
    elif then is not None and not callable(then):
        error = TypeError(f"then must be callable or None, not {then!r}")
    elif inspect.iscoroutinefunction(then):
        error = TypeError(
            f"then must be a sync function (it makes the message receive "
            f"gets; await in receive instead), not the async {then!r}"
        )
    if error is not None:
        if inspect.iscoroutine(work):
            work.close()
        raise error


def start(
    cell: Cell,
    work: Callable[[], Awaitable[Any]] | Awaitable[Any],
    then: Callable[[Result[Any]], object] | None,
) -> None:
    """Start ``work`` for ``cell``'s current incarnation (see the module
    docstring); the caller has checked the arguments and that the actor runs.
    """
    tg = cell.runtime.tg
    assert tg is not None
    extras = cell.ensure_extras()
    tasks = extras.tasks
    if tasks is None:
        tasks = extras.tasks = ActorTasks()
    # Work started before the actor's first start (from its __init__)
    # belongs to that start, as a timer does.
    job = _Job(work, then, cell.incarnation or 1)
    tasks.jobs.add(job)
    if tasks.ending:  # started as the incarnation's work ends: it ends too
        _cancel(job)
    tg.start_soon(_run, cell, tasks, job, name=f"{cell.path} (piped work)")


async def _run(cell: Cell, tasks: ActorTasks, job: _Job) -> None:
    # Not the actor's own task: an ask of the actor itself is fine from here
    # (the actor goes on handling messages, the request among them).
    current_cell.set(None)
    job.started = True
    result: Result[Any] | None = None
    try:
        work = job.work
        job.work = None
        if work is None:  # cancelled before it ran
            return
        with job.scope:
            try:
                awaitable: Any = work() if job.call else work  # type: ignore[operator]
                value = await awaitable
            except Exception as exc:
                result = Result(None, exc)
            except anyio.get_cancelled_exc_class() as exc:
                failure = stray_failure(exc)
                if failure is None:
                    raise  # the incarnation ended, or the system is torn down
                result = Result(None, failure)
            except BaseException as exc:
                # SystemExit, KeyboardInterrupt: as from a handler, the system
                # shuts down and it surfaces from the async with (raised out
                # of this task, asyncio would tear it out of the event loop).
                cell.runtime.crash(cell, exc)
            else:
                result = Result(value)
    finally:
        tasks._done(job)
    if result is None:
        return
    try:
        cell.mailbox.send_signal(Piped(result, job.then, job.incarnation))
    except MailboxClosed:
        cell.runtime.dead_letter(cell, result, "actor stopped")


def cancel_tasks(cell: Cell) -> None:
    """Cancel the background work of ``cell`` (without waiting)."""
    extras = cell.extras
    if extras is not None and extras.tasks is not None:
        extras.tasks.cancel_all()


async def end_tasks(cell: Cell) -> None:
    """Cancel the background work of ``cell`` and wait until it has ended."""
    extras = cell.extras
    if extras is not None and extras.tasks is not None and extras.tasks.jobs:
        await extras.tasks.end()
