"""Entering, stopping and leaving an ``ActorSystem``: the ``async with`` scope.

A part of [``ActorSystem``][actors.ActorSystem] (see ``_system``): the stop
(``stop``, ``wait_exited``), entering (the task group, the guardian, the
remote extension), and leaving (the graceful stop, its bound, the teardown,
and the one exception that surfaces from the block: a failure nobody handled,
as itself, never a cancellation nobody asked for).
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import TYPE_CHECKING, NoReturn, Self

import anyio

from ._actor import Actor
from ._actor_task import run_actor
from ._deadlines import ask_deadlines
from ._errors import SystemNotRunning
from ._hibernation import Hibernation
from ._lifecycle import StopReason, current_cell
from ._threads import call_soon_in_loop, in_loop_thread
from .channel.lowlevel import current_backend, task_spawner
from .extension import RemoteExtension, RemoteHost

if TYPE_CHECKING:
    from ._dead_letters import DeadLetters
    from ._runtime import Runtime

__all__ = ["SystemScope"]

logger = logging.getLogger("actors")


class _Guardian(Actor):
    """The parent of top-level actors (path ``/user``)."""


class SystemScope:
    """The scope part of [``ActorSystem``][actors.ActorSystem] (no slots of
    its own: the system's instances keep a ``__dict__``)."""

    # Set by ActorSystem.__init__.
    shutdown_timeout: float | None
    _runtime: Runtime
    _remote: RemoteExtension | None
    _body: anyio.CancelScope | None
    _host: int | None
    _host_waiting: bool
    _stop_called: bool

    if TYPE_CHECKING:

        @property
        def dead_letters(self) -> DeadLetters: ...

    # -- stopping ---------------------------------------------------------

    def stop(self) -> None:
        """Stop the system (Akka's ``terminate``): every actor stops, children
        before parents, as when the ``async with`` block is left; returns at
        once. Callable from an actor's handler, from any task of the
        system's event loop, or from another thread (the stop is then handed
        to the event loop, and starts there soon after this returns).

        Once every actor has stopped, the block ends as a normal exit: a
        body waiting in [``wait_exited``][actors.ActorSystem.wait_exited]
        returns from it; a body doing anything else is cancelled (the
        cancellation ends at the block, which exits without an exception).
        Put what must run after the stop after the ``async with`` block.
        ``spawn`` and ``spawn_pool`` (the system's, and
        ``from_thread.spawn``) raise
        [``SystemNotRunning``][actors.SystemNotRunning] from the stop on; an
        actor's own ``context.spawn`` works until that actor is asked to
        stop, and its children stop with it. Stopping twice, or a system that
        is not running, does nothing. The graceful stop takes as long as the
        actors' ``on_stop`` take (``shutdown_timeout`` bounds the block's
        exit, not this stop).
        """
        runtime = self._runtime
        if runtime.guardian is None or not runtime.running:
            return
        token = runtime.loop_token
        if token is not None and not in_loop_thread(token):
            # Another thread: the actors' state is the event loop's own.
            call_soon_in_loop(token, self._stop)
            return
        self._stop()

    def _stop(self) -> None:
        """``stop()``, in the event loop's thread."""
        runtime = self._runtime
        guardian = runtime.guardian
        if guardian is None or not runtime.running:
            return
        self._stop_called = True
        guardian.request_stop(StopReason.SYSTEM)

    async def wait_exited(self) -> None:
        """Wait until every actor of the system has stopped: after
        [``stop``][actors.ActorSystem.stop], after a failure nobody handled, or
        as the block is left. Returns at once if that happened already. The body
        of the ``async with`` (the task that entered the block) waiting here is
        not cancelled by [``stop``][actors.ActorSystem.stop]: this returns, and
        the block exits normally.

        Raises:
            SystemNotRunning: the system was never entered.
            RuntimeError: called from an actor of the system (its own stop
                would wait for it: use ``stop()`` alone, or watch).
        """
        guardian = self._runtime.guardian
        if guardian is None:
            raise SystemNotRunning("the actor system was never entered")
        cell = current_cell.get()
        if cell is not None and cell.runtime is self._runtime:
            raise RuntimeError(
                f"{cell.path} waits for its own system to exit: it would wait "
                "forever (its stop waits for its handler)"
            )
        if guardian.ended:
            return
        host = self._host is not None and anyio.get_current_task().id == self._host
        if host:
            self._host_waiting = True
        try:
            await guardian.terminated.wait()
        finally:
            if host:
                self._host_waiting = False

    # -- scope ------------------------------------------------------------

    async def __aenter__(self) -> Self:
        runtime = self._runtime
        if runtime.running or runtime.tg is not None:
            raise RuntimeError("an ActorSystem can be entered only once")
        # Everything that can fail happens before the task group is entered:
        # a task group entered by hand and then abandoned corrupts Trio's
        # cancel scope stack.
        backend = runtime.backend = current_backend()
        runtime.deadlines = ask_deadlines(runtime, backend)
        if runtime.hibernate_after is not None:
            runtime.hibernation = Hibernation(runtime, runtime.hibernate_after)
        runtime.loop_token = anyio.lowlevel.current_token()
        guardian = runtime.make_cell(
            None, "user", _Guardian, (), {}, None, runtime.drain, "permanent", None
        )
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            runtime.tg = tg
            # The actors' tasks: started with the loop's own primitive,
            # hosted by one task of the task group.
            spawner = runtime.spawner = task_spawner(backend.name)
            await tg.start(spawner.serve)
            runtime.guardian = guardian
            runtime.running = True
            if self._remote is not None:
                # Before the first actor: nothing to undo but the task group.
                await self._remote.start(RemoteHost(runtime))
            runtime.unstarted.add(guardian)
            tg.start_soon(self._run_guardian, name="/user")
            # The body's own scope, inside the task group's: what system.stop()
            # cancels once the actors have stopped (never raises).
            self._host = anyio.get_current_task().id
            body = self._body = anyio.CancelScope()
            body.__enter__()
        except BaseException:
            runtime.running = False
            if runtime.deadlines is not None:
                runtime.deadlines.close()
            tg.cancel_scope.cancel()
            if self._remote is not None:
                # A started remote layer ends only by its stop (its task is
                # shielded so that the actors' cancellation spares it).
                with anyio.CancelScope(shield=True):
                    await self._remote.stop()
            await tg.__aexit__(None, None, None)  # nothing started: returns
            raise
        return self

    async def _run_guardian(self) -> None:
        runtime = self._runtime
        assert runtime.guardian is not None
        await run_actor(runtime.guardian)
        # Every actor has stopped. A body still running is ended (its own
        # scope, so the cancellation ends at the block): a failure nobody
        # handled then surfaces from __aexit__, system.stop() ends the block
        # as a normal exit. Nothing here raises, and nothing cancels the
        # task group: a cancellation the body did not ask for never leaks.
        body = self._body
        if body is None or self._host_waiting:
            return  # the block is being left already, or waits in wait_exited
        if runtime.failure is not None or self._stop_called:
            body.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        """Stop every actor, then end the task group; see the class for what
        surfaces. The rule, on every path: a failure nobody handled surfaces as
        itself; otherwise the body's own exception propagates untouched; a
        cancellation propagates only if a scope outside the block was
        cancelled (the runtime's own, ``system.stop()``'s, a failure's or
        ``shutdown_timeout``'s, ends here)."""
        runtime = self._runtime
        guardian = runtime.guardian
        tg = runtime.tg
        assert guardian is not None and tg is not None
        cancelled = anyio.get_cancelled_exc_class()
        # What leaves the block so far: the body's exception, unless its own
        # scope (cancelled by system.stop() or a failure) took it.
        leaving = exc
        body = self._body
        if body is not None:
            self._body = None
            try:
                if body.__exit__(exc_type, exc, tb):
                    leaving = None  # the body was ended by us: a normal exit
            except BaseException as new:  # a group, without our cancellation
                leaving = new
        # What the task group is handed: what leaves, or a cancellation that
        # reached the graceful stop (the task group's own scope swallows it
        # when it is ours, as cancel_actors's; an outer scope's propagates).
        pending = leaving
        runtime.exiting = True
        guardian.request_stop(StopReason.SYSTEM)
        if isinstance(pending, cancelled):
            runtime.cancel_actors()  # cancelled from outside: at once
        else:
            try:
                await self._graceful_stop(pending is not None)
            except cancelled as new:  # cancelled while waiting: end it at once
                runtime.cancel_actors()
                pending = new
        raised: BaseException | None = None
        try:
            await self._teardown()
            if runtime.spawner is not None:
                runtime.spawner.close()  # the last actor tasks end, then it
            try:
                swallowed = await tg.__aexit__(
                    type(pending) if pending is not None else None,
                    pending,
                    pending.__traceback__ if pending is not None else None,
                )
            except BaseExceptionGroup as group:
                raised = self._surface(group)
            except BaseException as new:
                raised = new
            else:
                if swallowed:  # our own cancellation ended here
                    pending = None
        finally:
            runtime.exited = True
            runtime.finish_unstarted()
            # Dead letter streams end after the teardown's letters.
            self.dead_letters._close()
        failure = runtime.failure
        if failure is not None:
            if failure is exc:
                return False  # the body raised it itself: as it is
            _raise_as_itself(failure)
        if raised is None:
            if pending is not None and pending is not exc:
                _raise_as_itself(pending)
            # The body's exception (or an outer cancellation) goes on as it is.
            return pending is None and exc is not None
        if raised is exc:
            return False
        if (
            isinstance(raised, cancelled)
            and exc is not None
            and not isinstance(exc, cancelled)
        ):
            return False  # the body's own error beats an outer cancellation
        _raise_as_itself(raised)

    async def _graceful_stop(self, failing: bool) -> None:
        """Wait for every actor's stop: as long as they take for a normal
        exit without ``shutdown_timeout``, else within it (5 seconds for an
        exit by exception, shielded from the cancellation of the body);
        then cancel what is left.

        Raises:
            Cancelled: the block was cancelled while it waited.
        """
        runtime = self._runtime
        guardian = runtime.guardian
        assert guardian is not None
        timeout = self.shutdown_timeout
        if not failing and timeout is None:
            await guardian.terminated.wait()
            return
        if timeout is None:
            timeout = 5.0
        with anyio.CancelScope(shield=failing):
            with anyio.move_on_after(timeout):
                await guardian.terminated.wait()
        if not guardian.ended:
            logger.warning(
                "actor system: graceful stop took over %s s: cancelling the actors",
                timeout,
            )
            runtime.cancel_actors()

    async def _teardown(self) -> None:
        """After the actors: thread entry, the remote extension, the ask
        deadlines (shielded: it always runs to its end)."""
        runtime = self._runtime
        runtime.running = False
        if runtime.from_thread is not None:
            runtime.from_thread._close()
        if self._remote is not None:
            # After the actors; its tasks end before the task group does.
            with anyio.CancelScope(shield=True):
                try:
                    await self._remote.stop()
                except Exception:
                    logger.exception("actor system: stopping %r failed", self._remote)
        if runtime.deadlines is not None:
            runtime.deadlines.close()  # ends the Trio deadline task
        if runtime.hibernation is not None:
            runtime.hibernation.close()  # (every actor's run has ended)

    def _surface(self, group: BaseExceptionGroup[BaseException]) -> BaseException:
        """The one exception to raise from ``async with`` for a task group's."""
        failure = self._runtime.failure
        if failure is not None:
            return failure
        leaves = _leaves(group)
        cancelled = anyio.get_cancelled_exc_class()
        others = [e for e in leaves if not isinstance(e, cancelled)]
        if len(others) == 1:
            return others[0]
        return group


def _raise_as_itself(exc: BaseException) -> NoReturn:
    """Raise ``exc`` from ``__aexit__`` keeping its own ``__context__``:
    raised here, Python would chain it to whatever the block is leaving with
    (often the runtime's own cancellation of the body)."""
    context, suppress = exc.__context__, exc.__suppress_context__
    try:
        raise exc
    finally:
        exc.__context__, exc.__suppress_context__ = context, suppress


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out
