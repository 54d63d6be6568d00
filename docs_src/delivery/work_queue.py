"""A durable work queue: jobs are stored in SQLite before ``send`` returns,
pulled by two workers, and done when a worker's handler returned."""

import tempfile
from pathlib import Path

import anyio

from actors import Actor, ActorSystem
from actors.delivery import Delivery, DurableProducerQueue, WorkerController, WorkQueue
from actors.persistence import Codec, SqliteJournal


class Square(Actor[Delivery[int]]):
    def __init__(self, done: list[int]) -> None:
        self.done = done

    def receive(self, delivery: Delivery[int]) -> int:
        # delivery.job_id is the same wherever the job runs: an idempotency key.
        self.done.append(delivery.message)
        return delivery.message**2


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        journal = SqliteJournal(Path(tmp) / "jobs.db")
        async with journal, ActorSystem() as system:
            durable = DurableProducerQueue(journal, Codec(int))
            jobs = await WorkQueue.start(system, "squares", durable=durable)
            done: list[int] = []
            for _ in range(2):
                worker = system.spawn(Square, done)
                WorkerController.spawn(system, worker, jobs.ref, window=4)
            for n in range(10):
                await jobs.send(n)  # stored when it returns
            print("7 squared:", await jobs.ask(7))
            await jobs.wait_done()
            print("jobs run:", sorted(done))
            print(jobs.statistics())


if __name__ == "__main__":
    anyio.run(main)
