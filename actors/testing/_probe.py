"""``TestProbe``: an actor whose messages the test takes and checks (Akka's
TestProbe).

The probe is a real actor (a ref with a path, that can be told, sent to,
asked, watched, and can watch), but its mailbox hands every message straight
to the probe's queue, in arrival order, where the test's expectations take
them. An ask is recorded with its reply slot: ``probe.reply(value)`` answers
the last ask an expectation took, whenever the test decides, while later
messages keep arriving. ``Terminated`` signals of watched actors arrive through
the actor itself, after every message their actor sent before it stopped.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .._actor import Actor
from .._context import ActorContext
from .._envelope import Ask
from .._errors import ActorStopped, SystemNotRunning
from .._spawn_options import SpawnOptions
from .._traced import Traced
from .._validation import check_duration
from ..mailbox import Mailbox, MailboxClosed, Signal
from ._expectations import SHOWN, Expectations, Received, await_assert
from ._timefactor import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from .._cell import Cell
    from .._ref import ActorRef
    from .._system import ActorSystem

__all__ = ["TestProbe", "await_assert"]

T = TypeVar("T")


class _ProbeActor(Actor):
    """The probe's actor: only signals (``Terminated``) reach its
    ``receive``; messages go to the probe's queue from the mailbox."""

    def __init__(self, probe: TestProbe[Any]) -> None:
        self._probe = probe

    def receive(self, message: Any) -> None:
        self._probe._arrived(Received(message, None))


class _ProbeMailbox(Mailbox[Any]):
    """Hands every message to the probe on arrival; signals take the usual way
    through the actor. Unbounded: ``send`` never waits. Closing it (the probe
    stops) fails the asks nobody replied to with ``ActorStopped``."""

    __slots__ = ("_probe",)

    def __init__(self, probe: TestProbe[Any]) -> None:
        super().__init__()
        self._probe = probe

    def try_send(self, message: Any) -> None:
        if isinstance(message, Signal):
            raise TypeError(f"{message!r} is a signal: use send_signal() for signals")
        if self.closed:
            raise MailboxClosed("the mailbox is closed")
        if type(message) is Traced:  # a traced system's envelope: the probe
            message = message.message  # records what was sent
        if type(message) is Ask:
            self._probe._arrived(Received(message.message, message))
        else:
            self._probe._arrived(Received(message, None))

    async def send(self, message: Any) -> None:
        self.try_send(message)

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._probe._closed()


class TestProbe(Expectations[T]):
    """An actor whose received messages the test expects, one by one.

    ``TestProbe(system)`` spawns it as a top-level actor at once. Hand
    ``probe.ref`` to the actors under test, then check what they sent::

        probe = TestProbe[int](system)
        counter.tell(Get(reply_to=probe.ref))
        assert await probe.expect_message(int) == 0

    Every expectation takes messages from the front of the probe's queue, in
    arrival order, and waits for them at most ``timeout`` seconds (default:
    the remaining time of the innermost
    [``within``][actors.testing.TestProbe.within] block, else 3 seconds times
    the time factor, see [``time_factor``][actors.testing.time_factor]).
    Timeouts are on the event loop's clock, whatever the system's clock is,
    and are checked as the runtime checks durations: a number of seconds,
    >= 0 and finite (0: only what is queued already), else a TypeError or
    ValueError naming the argument. A failed expectation raises
    ``AssertionError`` listing the messages the probe received, which one it
    failed on, and those not taken yet.

    An ``ask`` to the probe waits until the test answers it with
    [``reply``][actors.testing.TestProbe.reply] (or
    [``reply_error``][actors.testing.TestProbe.reply_error]) after taking it;
    messages keep arriving meanwhile. Asks never answered fail with
    ``ActorStopped`` when the probe stops (``probe.stop()``, or its system
    exits).

    Args:
        system: the running system to spawn it in.
        name: its name (default: ``probe-<n>``).
        default_timeout: seconds expectations wait by default, before the time
            factor.

    Raises:
        SystemNotRunning: the system is not running.
        ValueError: ``name`` is taken or malformed, or ``default_timeout``
            is not > 0 and finite (TypeError: not a number).
    """

    __test__ = False  # a class pytest must not collect, despite its name

    def __init__(
        self,
        system: ActorSystem,
        *,
        name: str | None = None,
        default_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        check_duration("default_timeout", default_timeout)
        runtime = system._runtime
        guardian = runtime.guardian
        if guardian is None or not runtime.running:
            raise SystemNotRunning("the actor system is not running (use async with)")
        self._queue: deque[Received] = deque()
        self._taken: deque[Received] = deque(maxlen=SHOWN)
        self._taken_count = 0
        self._changed: anyio.Event | None = None
        self._last_ask: Ask | None = None
        self._unanswered: list[Ask] = []
        self._deadlines: list[float] = []
        self._default_timeout = default_timeout
        if name is None:
            name = runtime.default_name(guardian, "probe")
        options = SpawnOptions(name, None, None, "temporary")
        self._mailbox = _ProbeMailbox(self)
        #: The probe's ref: tell, send and ask it, watch it, hand it on.
        self.ref: ActorRef[T] = runtime.spawn(
            guardian, _ProbeActor, (self,), {}, options, self._mailbox
        )
        self._cell: Cell = self.ref._cell

    # -- arrivals ----------------------------------------------------------

    def _arrived(self, item: Received) -> None:
        self._queue.append(item)
        if item.ask is not None:
            self._unanswered.append(item.ask)
        changed = self._changed
        if changed is not None:
            self._changed = None
            changed.set()

    def _closed(self) -> None:
        backend = self.ref._cell.runtime.backend
        unanswered, self._unanswered = self._unanswered, []
        for ask in unanswered:
            ask.fail(ActorStopped(f"{self.ref.path} has stopped"), backend)
        changed = self._changed
        if changed is not None:
            self._changed = None
            changed.set()

    # -- what it is ----------------------------------------------------------

    @property
    def queued(self) -> list[T]:
        """The messages received and not taken yet, oldest first."""
        return [item.message for item in self._queue]  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"<TestProbe {self.path}: {len(self._queue)} queued>"

    # -- answering and watching ---------------------------------------------

    def _take_last_ask(self) -> Ask:
        ask = self._last_ask
        if ask is None:
            raise RuntimeError(
                f"{self.path}: no ask to reply to: take an asked message with an "
                f"expectation first (each ask is answered once)"
            )
        self._last_ask = None
        if ask in self._unanswered:
            self._unanswered.remove(ask)
        return ask

    def reply(self, value: object) -> None:
        """Answer the last ask an expectation took with ``value`` (Akka's
        ``sender() ! value``).

        An asker that has gone (timed out) gets nothing: the reply is counted
        as a dead letter, as any actor's would be.

        Raises:
            RuntimeError: the last message taken was not asked, or was
                answered already.
        """
        ask = self._take_last_ask()
        cell = self._cell
        if not ask.reply(value, cell.runtime.backend):
            cell.runtime.dead_letter(cell, ask.message, "ask abandoned")

    def reply_error(self, exc: BaseException) -> None:
        """Answer the last ask an expectation took with an exception: the
        asker's ``ask`` raises it.

        Raises:
            RuntimeError: as [``reply``][actors.testing.TestProbe.reply].
        """
        ask = self._take_last_ask()
        ask.fail(exc, self._cell.runtime.backend)

    def watch(self, ref: ActorRef[Any]) -> None:
        """Watch ``ref``: its [``Terminated``][actors.Terminated] comes to this probe
        ([``expect_terminated``][actors.testing.TestProbe.expect_terminated])."""
        ActorContext(self._cell).watch(ref)

    def unwatch(self, ref: ActorRef[Any]) -> None:
        """Stop watching ``ref``."""
        ActorContext(self._cell).unwatch(ref)

    def tell(self, message: T) -> None:
        """``probe.ref.tell(message)``: queue a message to the probe itself."""
        self.ref.tell(message)

    def stop(self) -> None:
        """Stop the probe (its unanswered asks fail with ``ActorStopped``)."""
        self.ref.stop()
