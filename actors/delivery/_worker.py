"""``WorkerController``: a worker of a [``WorkQueue``][actors.delivery.WorkQueue]
on any node: a consumer controller in front of the worker actor, registered
to the queue, and registered again whenever the queue's actor ends (its
process died and a new one started on the same journal), as Akka's workers
find their ``WorkPullingProducerController`` through the receptionist.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final

from .. import Actor, ActorContext, ActorRef, ActorSystem, Result, Terminated
from ._consumer import ConsumerController, ConsumerStatistics
from ._validation import check_count, check_seconds, spawner_system

__all__ = ["WorkerController"]

Finder = Callable[[], Awaitable[ActorRef[Any]]]


class _Retry:
    __slots__ = ()


_RETRY: Final = _Retry()


class _Joiner(Actor[Any]):
    """Finds the queue, registers the consumer controller to it, watches
    it, and starts again when it ends."""

    def __init__(
        self, controller: ConsumerController, find: Finder, retry_interval: float
    ) -> None:
        self.controller = controller
        self.find = find
        self.retry_interval = retry_interval
        self.queue: ActorRef[Any] | None = None

    def on_start(self) -> None:
        self.context.watch(self.controller.ref)
        self._look()

    def _look(self) -> None:
        self.context.run(self.find)

    def receive(self, message: object) -> None:
        if isinstance(message, Result):
            if message.ok and isinstance(message.value, ActorRef):
                self.queue = message.value
                self.controller.register_to(self.queue)
                self.context.watch(self.queue)
            else:
                self.context.timers.start_single("retry", _RETRY, self.retry_interval)
        elif message is _RETRY:
            self._look()
        elif isinstance(message, Terminated):
            if message.ref == self.controller.ref:
                self.context.stop()  # the worker is gone
            elif message.ref == self.queue:
                self.queue = None
                self._look()


class WorkerController:
    """A worker of a work queue: the worker actor gets each job as a
    [``Delivery``][actors.delivery.Delivery] ``ask`` (``delivery.job_id``
    names the job) and its handler's return confirms it.

    Attributes:
        consumer: the consumer controller in front of the worker.
    """

    def __init__(self, consumer: ConsumerController, joiner: ActorRef[Any]) -> None:
        self.consumer = consumer
        self._joiner = joiner

    @classmethod
    def spawn(
        cls,
        spawner: ActorSystem[Any] | ActorContext,
        worker: ActorRef[Any],
        queue: ActorRef[Any] | Finder,
        *,
        window: int = 8,
        retry_interval: float = 0.5,
        name: str | None = None,
    ) -> WorkerController:
        """Spawn a worker controller for ``worker`` and join ``queue``.

        Args:
            spawner: a system, or an actor's context.
            worker: the actor that runs the jobs.
            queue: the queue's ref (a ``WorkQueue.ref``, local or remote),
                or an async function of no arguments that finds it (e.g.
                ``lambda: system.remote.lookup(node, "/user/jobs")``),
                called again whenever the queue's actor ends and while it
                fails.
            window: jobs the worker holds at once (its demand).
            retry_interval: seconds between two attempts at finding the
                queue (also the worker's failed-handler retry).
            name: the consumer controller's name.

        Raises:
            TypeError, ValueError: a bad argument, naming it.
            actors.SystemNotRunning: the system is not running.
        """
        spawner_system(spawner)
        if not isinstance(worker, ActorRef):
            raise TypeError(f"worker must be an ActorRef, not {worker!r}")
        interval = check_seconds("retry_interval", retry_interval)
        if isinstance(queue, ActorRef):
            ref = queue

            async def find() -> ActorRef[Any]:
                return ref

            finder: Finder = find
        elif callable(queue):
            finder = queue
        else:
            raise TypeError(f"queue must be an ActorRef or a finder, not {queue!r}")
        consumer = ConsumerController.spawn(
            spawner,
            worker,
            window=check_count("window", window),
            retry_interval=interval,
            name=name,
        )
        factory: Callable[[], _Joiner] = partial(_Joiner, consumer, finder, interval)
        joiner = spawner.spawn(factory)
        return cls(consumer, joiner)

    def statistics(self) -> ConsumerStatistics:
        """The consumer controller's counts."""
        return self.consumer.statistics()

    def __repr__(self) -> str:
        return f"WorkerController({self.consumer.consumer!r})"
