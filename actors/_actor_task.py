"""An actor's task: incarnation after incarnation until it terminates.

Each incarnation starts (``_incarnation``), handles messages (``_dispatch``)
until a ``Restart`` or ``Stop`` unwinds it, or until the actor is idle: an
incarnation whose first look finds its mailbox empty, and one that has been
parked on it since the system's last idle tick (``_hibernation``), end the
run, and the actor holds no task (``Mailbox.wait_detached``); the next item,
a stop or a control command starts a new run (``resume``) that goes on with
the same incarnation, in the context variables the last run left. A restart stops
the incarnation before the next one starts (after the backoff the
supervisor chose). Whatever ends the task, ``_termination`` runs
last. What no supervisor handles (a bug in the runtime; ``SystemExit`` or
``KeyboardInterrupt`` from a handler) shuts the system down, so it surfaces
from ``async with`` instead of leaving askers and joiners waiting.

The hooks' rule (Akka's, for preStart and postStop): every instance built
gets ``on_start`` (``on_restart`` after a restart) before anything else, a
stop requested before its task first ran included, and ``on_stop`` once its
start hook has returned. An instance whose start hook raised gets no
``on_stop`` (as Akka's postStop, OTP's ``terminate`` after a failed
``init``): the start hook cleans up after itself. Only a cancelled teardown
(``shutdown_timeout`` ran out, or the block was cancelled) skips hooks that
have not run.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import anyio

from ._control import Restart, Stop
from ._dispatch import run_loop
from ._faults import failed
from ._incarnation import start_incarnation, stop_incarnation
from ._invoke import stray_failure
from ._lifecycle import NOTHING, RUNNING, current_cell
from ._termination import terminate

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = ["run_actor"]


def resume(cell: Cell, _: None) -> None:
    """Mail came to an idle actor (the callback of ``Mailbox.wait_detached``,
    in the sender's call): schedule its next run."""
    runtime = cell.runtime
    spawner = runtime.spawner
    runtime.unstarted.add(cell)
    if spawner is not None:
        # RuntimeError: the system has ended; finish_unstarted settles it.
        with contextlib.suppress(RuntimeError):
            spawner.start(run_actor, cell, cell.context_vars)


async def run_actor(cell: Cell) -> None:
    """A run of ``cell``'s actor (started by the system's spawner): the first
    one starts it; one started for an idle actor (``resume``: its state is
    RUNNING) goes on handling messages."""
    current_cell.set(cell)
    cell.runtime.unstarted.discard(cell)
    resumed = cell.state is RUNNING
    cause: BaseException | None = None
    restarting = False
    # Set once the incarnation a one-for-all / rest-for-one supervisor waits
    # for has started or failed; whatever happens, it is set (finally below).
    done: anyio.Event | None = None
    delay = 0.0
    system = cell.runtime
    if system.cancelling:
        # Torn down before its first step (asyncio never runs such a task at
        # all): nothing starts, its hooks are skipped as every actor's are.
        with system.shield():
            await terminate(cell, cancelled=True)
        return
    try:
        while True:
            try:
                if resumed:
                    # Idle since its last run: its incarnation goes on, and
                    # the run may end idle again (_hibernation).
                    resumed = False
                    await run_loop(cell, resume)
                    return  # idle again: the next mail starts a new run
                if delay:  # backoff: the old incarnation has ended already
                    await cell.backoff(delay)
                    delay = 0.0
                if cell.stop_requested and (restarting or cell.instance is None):
                    # Nothing built yet (a stop during backoff wins, a pool's
                    # worker made in its task): nothing to start or stop. An
                    # instance the spawner built is started, then stopped
                    # (below, before its first message): every instance built
                    # gets on_start, then on_stop, whatever the timing.
                    raise Stop
                try:
                    await start_incarnation(cell, cause, restarting)
                except Exception as exc:
                    if done is not None:
                        done.set()
                    # The supervisor never resumes an instance that did not
                    # start (it restarts it instead): this ends by raising.
                    await failed(cell, exc, NOTHING)
                    raise Restart(exc) from None  # unreachable unless that changes
                if done is not None:
                    done.set()
                    done = None
                cell.state = RUNNING
                # Any run may end idle but the guardian's (the system's
                # scope waits for its one run).
                await run_loop(cell, resume if cell.parent is not None else None)
                return  # idle: the next mail starts a new run
            except Restart as restart:
                if done is not None:  # a start it was waiting for failed
                    done.set()
                cause, restarting, done = restart.cause, True, restart.done
                delay = restart.delay
                await stop_incarnation(cell)
                continue
            except Stop:
                break
    except anyio.get_cancelled_exc_class() as exc:
        failure = stray_failure(exc)
        if failure is None:  # torn down: the system is cancelling us
            with system.shield():
                await terminate(cell, cancelled=True)
            raise
        # A stray cancellation outside any handler (a runtime path that awaited
        # something cancelled): a crash, never a silent teardown.
        system.crash(cell, failure)
    except BaseException as exc:
        system.crash(cell, exc)
    finally:
        if done is not None:
            done.set()
    with system.shield():
        await terminate(cell, cancelled=False)
