"""``EventSourcedTestKit``: commands against one event-sourced actor on a
``MemoryJournal``, and what they did (Akka's EventSourcedBehaviorTestKit).

The actor runs for real, in a system the test gives (the ``actor_system``
fixture): its recovery, its persists and its side effects are the production
code's; only the journal is in memory, where the test reads the stored events
and injects faults (``kit.journal.faults``). After each command the kit also
checks that the state survives the codec (when its class is registered), as a
snapshot would need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import anyio

from ... import ActorRef, ActorSystem
from ...testing import dilated
from .._codec import Codec
from .._durable import GET_STATE
from .._event_sourced import EventSourcedActor
from .._memory import MemoryJournal

__all__ = ["CommandResult", "EventSourcedTestKit", "RestartResult"]

C = TypeVar("C")
E = TypeVar("E")
S = TypeVar("S")


@dataclass(frozen=True)
class CommandResult(Generic[C, E, S]):
    """What one command did.

    Attributes:
        command: the command.
        events: the events it stored, decoded from the journal's bytes.
        state: the state after it.
        reply: the reply to its ask (None: none).
        sequence_nr: the sequence number after it.
    """

    command: C
    events: list[E]
    state: S
    reply: Any
    sequence_nr: int


@dataclass(frozen=True)
class RestartResult(Generic[S]):
    """The state a restarted actor recovered, and its sequence number."""

    state: S
    sequence_nr: int


class EventSourcedTestKit(Generic[C, E, S]):
    """One event-sourced actor of ``system`` on a ``MemoryJournal``::

        async with EventSourcedTestKit(actor_system, Account, "alice") as kit:
            result = await kit.run_command(Deposit(10))
            assert result.events == [Deposited(10)]
            assert (await kit.restart()).state == result.state

    Args:
        system: the running system the actor runs in.
        factory: makes the actor (its class, or any callable returning one).
        args: the factory's arguments.
        journal: the journal (default: a new ``MemoryJournal``); the actor's
            own ``journal`` and ``snapshot_store`` are set to it.
        timeout: seconds to wait for each reply (default: 3, times the kit's
            time factor).
    """

    def __init__(
        self,
        system: ActorSystem,
        factory: Callable[..., EventSourcedActor[C, E, S]],
        *args: Any,
        journal: MemoryJournal | None = None,
        timeout: float | None = None,
    ) -> None:
        self.system = system
        self.journal = MemoryJournal() if journal is None else journal
        self._factory = factory
        self._args = args
        self._timeout = dilated(3.0) if timeout is None else timeout
        self._ref: ActorRef[Any] | None = None
        self._codec: Codec | None = None
        self._persistence_id: str | None = None
        self._spawned = 0

    def _make(self) -> EventSourcedActor[C, E, S]:
        actor = self._factory(*self._args)
        if not isinstance(actor, EventSourcedActor):
            raise TypeError(
                f"EventSourcedTestKit runs an EventSourcedActor, not {actor!r}"
            )
        actor.journal = self.journal
        actor.snapshot_store = self.journal
        self._codec = type(actor).codec
        return actor

    async def start(self) -> Self:
        """Spawn the actor and wait until it has recovered.

        Raises:
            Exception: recovery failed (``RecoveryFailed``) or the factory
                raised; the actor is stopped again before it leaves.
        """
        self._spawned += 1
        self._ref = self.system.spawn(
            self._make, name=f"kit-{id(self)}-{self._spawned}"
        )
        try:
            await self._view()
        except BaseException:
            # A start that failed (an ask timed out, a cancellation) leaves
            # no actor behind: ``async with`` never reaches ``__aexit__``.
            with anyio.CancelScope(shield=True):
                await self.stop()
            raise
        return self

    async def stop(self) -> None:
        """Stop the actor and wait for it to end."""
        ref = self._ref
        if ref is not None:
            ref.stop()
            await ref.join()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def ref(self) -> ActorRef[C]:
        """The actor's ref.

        Raises:
            RuntimeError: the kit was not started.
        """
        if self._ref is None:
            raise RuntimeError("start the kit first (async with, or await kit.start())")
        return self._ref

    @property
    def persistence_id(self) -> str:
        """The actor's persistence id (known once it has recovered)."""
        if self._persistence_id is None:
            raise RuntimeError("start the kit first (async with, or await kit.start())")
        return self._persistence_id

    async def _view(self) -> tuple[S, int]:
        ref: ActorRef[Any] = self.ref
        state, seq, persistence_id = await ref.ask(GET_STATE, self._timeout)
        self._persistence_id = persistence_id
        return state, seq

    async def state(self) -> S:
        """The actor's current state."""
        return (await self._view())[0]

    def _decode(self, first: int, last: int) -> list[E]:
        codec = self._codec
        assert codec is not None
        return [
            codec.decode(stored.manifest, stored.payload)
            for stored in self.journal.events(self.persistence_id)
            if first <= stored.sequence_nr <= last
        ]

    def events(self) -> list[E]:
        """Every stored event of the actor, decoded, oldest first (those
        deleted by a snapshot rule are gone)."""
        return self._decode(0, 2**63)

    async def run_command(self, command: C) -> CommandResult[C, E, S]:
        """Ask the actor ``command`` and return what it did.

        Raises:
            Exception: what the ask raised (the handler's error, a refused
                write, ``AskTimeout``...).
            AssertionError: the state after it does not survive the codec.
        """
        _, before = await self._view()
        reply = await self.ref.ask(command, self._timeout)
        state, after = await self._view()
        self._check_codec(state)
        return CommandResult(
            command, self._decode(before + 1, after), state, reply, after
        )

    def _check_codec(self, state: S) -> None:
        codec = self._codec
        if codec is None or codec.manifest_of(type(state)) is None:
            return
        manifest, payload = codec.encode(state)
        again = codec.decode(manifest, payload)
        if again != state:
            raise AssertionError(
                f"the state does not survive the codec: {state!r} came back as "
                f"{again!r}"
            )

    async def restart(self) -> RestartResult[S]:
        """Stop the actor and start a fresh one on the same journal; return
        what it recovered (compare it with the state before)."""
        await self.stop()
        await self.start()
        state, seq = await self._view()
        return RestartResult(state, seq)
