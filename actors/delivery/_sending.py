"""What the two sending sides of reliable delivery share (a
``ProducerController`` and a ``WorkQueue``): how they end (``fail``,
``stop``, the error every call raises then), storing an accepted message in
the durable queue before its call returns, waiting for an ``ask``'s
confirmation, and the endpoint actor's last stop.

Each is a [``Sender``][actors.delivery._sending.Sender]; what differs stays
in its own module: the producer numbers messages on one stream
(``_channel``), the queue hands jobs to the stream of the worker with the
most demand.
"""

from __future__ import annotations

from typing import Any, Final

import anyio

from .. import Actor, ActorRef, ActorSystem
from ._durable_queue import DurableProducerQueue
from ._errors import ProducerFailed, ProducerStopped, ProducerSystemExited

__all__ = ["TICK", "Sender", "SenderEndpoint"]


class _Tick:
    """The resend timer's firing (the endpoint's periodic timer)."""

    __slots__ = ()


TICK: Final = _Tick()


class Sender:
    """The common part of a producer controller and a work queue.

    Args:
        system: its system.
        name: what errors call it (``"producer 'orders'"``).

    Attributes:
        ref: its endpoint actor.
        failed: the error it ended with (None while it runs).
    """

    def __init__(self, system: ActorSystem[Any], name: str) -> None:
        self.system = system
        self.name = name
        self.ref: ActorRef[Any] = None  # type: ignore[assignment]
        self.failed: ProducerFailed | None = None

    def _release(self) -> None:
        """Wake every call that waits (each finds the sender ended)."""
        raise NotImplementedError

    def _check(self) -> None:
        """Raise what a call raises once the sender has ended (nothing while
        it runs).

        Raises:
            ProducerFailed, ProducerStopped, ProducerSystemExited: it ended.
        """
        if self.failed is not None or not self.system.running:
            raise self._error()

    def _error(self) -> ProducerFailed:
        """What a call raises now the sender has ended."""
        if not self.system.running:
            return ProducerSystemExited(f"{self.name}: its system has exited")
        assert self.failed is not None
        return self.failed

    def fail(self, error: ProducerFailed) -> None:
        """End with ``error`` (the first error is kept): every waiting call
        wakes and raises it, every later one too."""
        if self.failed is None:
            self.failed = error
        self._release()

    def stop(self) -> None:
        """Stop the endpoint actor; every waiting and later call raises
        ``ProducerStopped`` (a ``ProducerFailed``; ``ProducerSystemExited``
        once the system has exited). What the durable queue stored is sent
        by a sender started again on it. Stopping twice does nothing more."""
        self.fail(ProducerStopped(f"{self.name} was stopped"))
        if self.system.running:
            self.ref.stop()

    async def _store(
        self, durable: DurableProducerQueue, number: int, encoded: tuple[str, bytes]
    ) -> None:
        """Store message ``number`` (``encoded`` by ``durable``) before its
        call returns; a failure ends the sender (every waiter raises a
        ``ProducerFailed`` whose cause it is) and is raised here.

        Raises:
            actors.persistence.JournalError, SequenceConflict: the append
                failed (another writer of this id, for SequenceConflict).
        """
        try:
            await durable.store(number, encoded)
        except BaseException as exc:
            failure = ProducerFailed(
                f"{self.name}: the durable queue did not store message "
                f"{number}: {exc!r}"
            )
            failure.__cause__ = exc
            self.fail(failure)
            raise

    @staticmethod
    async def _wait(done: anyio.Event, seconds: float | None) -> None:
        """Wait for ``done`` (an ``ask``'s confirmation), at most
        ``seconds`` (None: no limit).

        Raises:
            TimeoutError: not within ``seconds``.
        """
        if seconds is None:
            await done.wait()
        else:
            with anyio.fail_after(seconds):
                await done.wait()


class SenderEndpoint(Actor[Any]):
    """The base of a sender's endpoint actor: its last stop (not a
    restart's: its parent stopped, its system is stopping, or the sender's
    ``stop()``) ends the sender with ``ProducerStopped``."""

    def __init__(self, owner: Sender) -> None:
        self.owner = owner

    def on_stop(self) -> None:
        if not self.context.self_ref.is_alive:
            owner = self.owner
            owner.fail(
                ProducerStopped(
                    f"{owner.name} stopped: its actor {self.context.path} stopped"
                )
            )
