"""A pool is a ref: watch it, stop it, give it its own supervisor strategy,
read its statistics."""

from typing import Any

import anyio

from actors import Actor, ActorSystem, OneForOne, PoolRef, StopReason, Terminated


class Hasher(Actor):
    def receive(self, message: bytes) -> int:
        return hash(message)


class Dispatcher(Actor):
    def __init__(self, ended: anyio.Event) -> None:
        self.ended = ended
        self.pool: PoolRef[Any] | None = None

    def on_start(self) -> None:
        self.pool = self.context.spawn_pool(
            Hasher,
            4,
            name="hashers",
            capacity=100,
            # At most 3 worker restarts within 10 s, then the pool fails.
            strategy=OneForOne(max_restarts=3, within=10.0),
        )
        self.context.watch(self.pool)

    def receive(self, message: Any) -> Any:
        match message:
            case "backlog":
                assert self.pool is not None
                return self.pool.statistics().queued_messages
            case "shut down the pool":
                assert self.pool is not None
                self.context.stop(self.pool)
            case Terminated(ref=ref, reason=reason):
                assert ref is self.pool and reason is StopReason.PARENT
                self.ended.set()
        return None


async def main() -> None:
    ended = anyio.Event()
    async with ActorSystem() as system:
        dispatcher = system.spawn(Dispatcher, ended, name="dispatcher")
        assert await dispatcher.ask("backlog") == 0
        pool = system.lookup("/user/dispatcher/hashers")
        assert isinstance(pool, PoolRef)
        stats = pool.statistics()
        assert stats.capacity == 400  # 4 workers, 100 each (round-robin)
        dispatcher.tell("shut down the pool")
        await ended.wait()


if __name__ == "__main__":
    anyio.run(main)
