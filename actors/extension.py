"""The plug-in interface through which an extension (the remote layer) joins
a system: for writers of such extensions, not for applications (it is not
part of the documented API and may change between minor versions).

The runtime never imports the remote layer: ``ActorSystem(remote=...)`` takes
any object implementing ``RemoteExtension``, starts it when the system is
entered (after its task group, before the first actor) and stops it when the
system is left (after the actors, before the task group ends), and hands it a
``RemoteHost``: the few things of the runtime an extension needs (its task
group, finding an actor by path, asking an actor without waiting for room,
dead letters). Nothing here is on a local message's path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ._actor import UNHANDLED as UNHANDLED
from ._cell import Cell
from ._dead_letters import DeadLetter
from ._envelope import EXPIRED, PENDING, Ask
from ._errors import AskTimeout, SystemNotRunning
from ._extras import import_extra as import_extra
from ._extras import missing_extra as missing_extra
from ._lifecycle import as_exit_reason
from ._pool import PoolRef
from ._ref import ActorRef, signal_error
from ._system_signals import Terminated
from .mailbox import MailboxClosed, Signal

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ._runtime import Runtime
    from ._system import ActorSystem

__all__ = [
    "UNHANDLED",
    "LocalAsk",
    "attach_cluster",
    "detach_cluster",
    "R",
    "RemoteExtension",
    "RemoteHost",
    "host_of",
    "import_extra",
    "missing_extra",
]


@runtime_checkable
class RemoteExtension(Protocol):
    """What ``ActorSystem(remote=...)`` accepts (``actors.remote.Remote``).

    ``start`` is awaited once when the system is entered, with the system's
    task group running and before any actor starts; if it raises, the system
    is not entered and the exception propagates from ``async with`` (the
    extension cleans up after itself). ``stop`` is awaited once when the
    system is left, after its actors have stopped (or were cancelled), shielded
    from cancellation; it must end every task the extension started.
    """

    async def start(self, host: RemoteHost) -> None:
        """Join the system ``host`` describes."""
        ...

    async def stop(self) -> None:
        """Leave it: end every task started by ``start``."""
        ...

    def watch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """A local actor (``watcher``, an opaque token) watches ``ref``, a ref
        without a local cell: deliver its Terminated later with
        ``RemoteHost.terminated``.

        Raises:
            TypeError: ``ref`` is not a ref this extension made.
        """
        ...

    def unwatch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """``watcher`` no longer watches ``ref`` (it unwatched, or stopped)."""
        ...

    def local_terminated(self, ref: ActorRef[Any], reason: object) -> None:
        """A local actor marked by
        ``RemoteHost.watch_local`` terminated
        with ``reason`` (called synchronously as it terminates)."""
        ...


if TYPE_CHECKING:
    # The type of ActorSystem.remote, with a PEP 696 default:
    # ActorSystem(remote=Remote(...)) is an ActorSystem[Remote] whose .remote
    # is a Remote; a bare ActorSystem (an annotation, context.system) keeps
    # Any. Checkers take the default from typing_extensions' stubs; at run
    # time it is a plain TypeVar.
    from typing_extensions import TypeVar as _DefaultTypeVar

    R = _DefaultTypeVar("R", bound=RemoteExtension, default=Any)
else:
    R = TypeVar("R")


def attach_cluster(system: ActorSystem[Any], cluster: object) -> bool:
    """Make ``cluster`` what ``system.cluster`` answers (the membership an
    extension, ``actors.sharding``, runs), unless another one is attached.

    Returns:
        True if attached; False if ``system`` has another cluster already
        (several ``Sharding`` objects on one system, as tests run them: the
        first entered is the system's).
    """
    if system._cluster is not None:
        return system._cluster is cluster
    system._cluster = cluster
    return True


def detach_cluster(system: ActorSystem[Any], cluster: object) -> None:
    """``system.cluster`` raises ``ClusterNotStarted`` again, if ``cluster``
    was what it answered."""
    if system._cluster is cluster:
        system._cluster = None


class LocalAsk:
    """An ask enqueued by
    ``RemoteHost.ask_nowait``: await its outcome
    with ``result``, or get it from
    ``outcome`` in its ``on_done``."""

    __slots__ = ("_envelope", "_on_done", "_runtime")

    def __init__(
        self,
        envelope: Ask,
        runtime: Runtime,
        on_done: Callable[[LocalAsk], None] | None = None,
    ) -> None:
        self._envelope = envelope
        self._runtime = runtime
        self._on_done = on_done
        if on_done is not None:
            envelope.on_done = self._filled

    def _filled(self, envelope: Ask) -> None:
        on_done = self._on_done
        assert on_done is not None
        on_done(self)

    def outcome(self) -> Any:
        """The reply, once the ask is answered (in ``on_done``).

        Raises:
            Exception: whatever the handler raised (or ``ActorStopped``, ...).
            RuntimeError: the ask is not answered yet.
        """
        envelope = self._envelope
        if envelope.state == PENDING:  # not .done: a property call saved
            raise RuntimeError("the ask is not answered yet")
        return envelope.outcome_or_raise()

    async def result(self, timeout: float | None) -> Any:
        """The reply, waiting at most ``timeout`` seconds (None: no limit).

        Raises:
            AskTimeout: no reply in time.
            ActorStopped: the actor stopped before replying.
            Exception: whatever the handler raised.
        """
        envelope = self._envelope
        deadlines = self._runtime.deadlines
        if deadlines is None:
            raise SystemNotRunning("the system has exited")
        if timeout is None:
            return await envelope.wait(deadlines.backend)
        reply = await deadlines.wait(envelope, timeout)
        if reply is EXPIRED:
            raise AskTimeout(
                f"{envelope.recipient.path} did not reply within {timeout} s"
            )
        return reply


class RemoteHost:
    """What a ``RemoteExtension`` may use of the
    system it joined."""

    __slots__ = ("_runtime",)

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @property
    def system(self) -> ActorSystem:
        """The public face of the system."""
        return self._runtime.system

    @property
    def task_group(self) -> TaskGroup:
        """The task group the system's actors run in."""
        tg = self._runtime.tg
        if tg is None:
            raise SystemNotRunning("the actor system is not running")
        return tg

    def find(self, path: str) -> ActorRef[Any] | None:
        """The ref of the live actor at ``path`` (``"/user/a/b"``), or None."""
        cell = self._runtime.guardian
        if cell is None:
            return None
        names = path.split("/")
        # "/user/a/b" -> ["", "user", "a", "b"]
        if len(names) < 2 or names[0] or names[1] != cell.name:
            return None
        for name in names[2:]:
            child = cell.children.get(name)
            if child is None:
                return None
            cell = child
        return cell.ref if cell.alive else None

    def path_of(self, ref: object) -> str | None:
        """The path of ``ref`` if it is a ref to an actor of this system, else
        None (a ref of another system, or not a plain ref)."""
        cell: Cell | None = getattr(ref, "_cell", None)
        if cell is None or cell.runtime is not self._runtime:
            return None
        return cell.path

    def ask_nowait(
        self,
        ref: ActorRef[Any],
        message: object,
        *,
        context: object = None,
        on_done: Callable[[LocalAsk], None] | None = None,
    ) -> LocalAsk:
        """Enqueue an ask of ``message`` to the local actor ``ref`` now, in
        order with tells enqueued before and after it (never waits).

        ``context`` is the OpenTelemetry context the handling joins in a
        traced system (None: none). ``on_done``, when given, is called with
        the returned ``LocalAsk`` as soon as its outcome is
        in (sync, in the replying task: it must be quick and must not raise);
        then do not await ``LocalAsk.result``.

        Raises:
            TypeError: ``ref`` is not a ref of this system, or ``message`` is
                a runtime signal.
            MailboxFull: the actor's mailbox is at its capacity.
            ActorStopped: the actor has stopped.
        """
        cell: Cell | None = getattr(ref, "_cell", None)
        if cell is None or cell.runtime is not self._runtime:
            raise TypeError(f"{ref!r} is not an actor of this system")
        if isinstance(message, Signal):
            raise signal_error(message)
        envelope = Ask(message, cell)
        if self._runtime.telemetry is not None:
            # A traced receive reads the asker's context.
            envelope.context = context
            envelope.enqueued = 0.0
        local = LocalAsk(envelope, self._runtime, on_done)
        try:
            if isinstance(ref, PoolRef):
                # Routed to a worker. PoolRef's own tell, not a traced
                # pool's: the envelope must reach the worker unwrapped.
                PoolRef.tell(ref, envelope)
            else:
                cell.mailbox.try_send(envelope)
        except MailboxClosed:
            raise ref._stopped() from None
        return local

    def answer_deadlines(self) -> Callable[[Any, float], Awaitable[bool]] | None:
        """The system's ask deadlines for an extension's own one-answer
        slots (the remote layer's pending asks), or None.

        Returns:
            ``park(slot, timeout) -> bool``: parks on ``slot`` (a
            ``channel.lowlevel.Slot`` with the ``prev``, ``next`` and
            ``deadline`` attributes of an ``Ask``) until it is filled (True)
            or ``timeout`` seconds pass (False), sharing the timer of the
            system's asks with that timeout instead of a timer per wait.
            None when the system has a clock of its own
            (``ActorSystem(clock=...)``): answers from the network keep the
            event loop's time then (a timer per wait, ``Slot.park_for``).

        Raises:
            SystemNotRunning: the system is not entered.
        """
        runtime = self._runtime
        deadlines = runtime.deadlines
        if deadlines is None:
            raise SystemNotRunning("the actor system is not running")
        if runtime.clock is not None:
            return None
        return deadlines.park_slot

    def takes_signals(self, ref: ActorRef[Any]) -> bool:
        """Whether ``ref`` is a plain actor of this system (not a pool): its
        own mailbox takes ``send_signal``."""
        cell: Cell | None = getattr(ref, "_cell", None)
        return (
            cell is not None
            and cell.runtime is self._runtime
            and not isinstance(ref, PoolRef)
        )

    def send_signal(self, ref: ActorRef[Any], signal: Signal) -> None:
        """Put ``signal`` in the mailbox of ``ref`` (a ref for which
        ``takes_signals`` is true), in its FIFO place after the messages
        enqueued before it; never waits, never refused for room. When the
        actor reaches it, the runtime awaits ``signal.deliver(cell,
        receive)``; if the actor stops first, it calls
        ``signal.undelivered(cell)`` (each if the signal has it).

        Raises:
            TypeError: ``ref`` does not take signals.
            MailboxClosed: the actor has stopped.
        """
        if not self.takes_signals(ref):
            raise TypeError(f"{ref!r} is not a plain actor of this system")
        ref._cell.mailbox.send_signal(signal)

    def watch_local(self, ref: ActorRef[Any]) -> tuple[bool, object]:
        """Report the termination of the local actor ``ref`` to the extension
        (``local_terminated``),
        as another node watches it.

        Returns:
            ``(True, None)`` if it is alive (its termination will be
            reported); ``(False, reason)`` if it terminated already.

        Raises:
            TypeError: ``ref`` is not a ref of this system.
        """
        cell: Cell | None = getattr(ref, "_cell", None)
        if cell is None or cell.runtime is not self._runtime:
            raise TypeError(f"{ref!r} is not an actor of this system")
        if cell.ended:
            return False, cell.reason
        cell.ensure_extras().remote_watched = True
        return True, None

    def terminated(self, watcher: object, ref: ActorRef[Any], reason: object) -> None:
        """Deliver ``Terminated(ref, reason)`` to ``watcher`` (a token given to
        ``RemoteExtension.watch``) if it still
        watches ``ref``; it is delivered once (a second call finds it
        unwatched)."""
        cell = watcher
        if type(cell) is not Cell or cell.runtime is not self._runtime:
            return
        extras = cell.extras
        if extras is None or ref not in extras.watching:
            return
        with contextlib.suppress(MailboxClosed):
            cell.mailbox.send_signal(Terminated(ref, as_exit_reason(reason)))

    def dead_letter(
        self, recipient: ActorRef[Any], message: object, reason: str
    ) -> None:
        """Count ``message`` for ``recipient`` (any ref, remote ones too) as a
        dead letter and hand it to the dead letters' subscribers."""
        self._runtime.dead_letters.publish(DeadLetter(recipient, message, reason))


def host_of(system: ActorSystem) -> RemoteHost:
    """A ``RemoteHost`` of ``system`` for a layer above the runtime that is
    not its ``RemoteExtension`` but needs the same few things
    (``actors.delivery`` puts its batches in a local consumer's mailbox as
    signals: ``send_signal``). ``UNHANDLED`` is what ``Actor.receive``
    returns for a message it did not handle (a signal's ``deliver`` that
    calls ``receive`` tells it from a reply so).
    """
    return RemoteHost(system._runtime)
