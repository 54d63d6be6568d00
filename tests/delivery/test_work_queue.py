"""Work queues: jobs pulled by workers by demand, each with an id, done once
the worker's handler returned; a worker node lost with jobs in hand has them
run by another; a durable queue started again hands out every stored job
that was not done."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import msgspec
import pytest

from actors import Actor, ActorSystem
from actors.delivery import Delivery, DurableProducerQueue, WorkerController, WorkQueue
from actors.nats import NatsServer
from actors.persistence import Codec, MemoryJournal
from actors.testing import wait_all_blocked
from actors.testing.remote import Cluster

pytestmark = pytest.mark.anyio


class Task(msgspec.Struct, frozen=True):
    n: int


class Runs:
    """Which worker ran which job, shared with the test."""

    def __init__(self) -> None:
        self.by_job: Counter[int] = Counter()
        self.by_worker: Counter[str] = Counter()
        self.changed = anyio.Event()
        self.gate: anyio.Event | None = None

    async def wait_jobs(self, count: int) -> None:
        while len(self.by_job) < count:
            await self.changed.wait()


class Worker(Actor[Delivery[Task]]):
    def __init__(self, runs: Runs, name: str) -> None:
        self.runs = runs
        self.name = name

    async def receive(self, delivery: Delivery[Task]) -> int:
        if self.runs.gate is not None and self.name == "held":
            await self.runs.gate.wait()
        assert delivery.job_id is not None
        self.runs.by_job[delivery.job_id] += 1
        self.runs.by_worker[self.name] += 1
        self.runs.changed.set()
        self.runs.changed = anyio.Event()
        return delivery.message.n * 2


async def test_jobs_are_pulled_by_every_worker_and_each_runs_once(
    actor_system: ActorSystem[Any],
) -> None:
    runs = Runs()
    queue = await WorkQueue.start(actor_system, "jobs")
    for i in range(3):
        worker = actor_system.spawn(Worker, runs, f"w{i}")
        WorkerController.spawn(actor_system, worker, queue.ref, window=4)
    ids = [await queue.send(Task(n)) for n in range(100)]
    assert ids == list(range(1, 101))
    with anyio.fail_after(20):
        await queue.wait_done()
    assert sorted(runs.by_job) == ids and set(runs.by_job.values()) == {1}
    assert len(runs.by_worker) == 3
    with anyio.fail_after(10):
        assert await queue.ask(Task(21)) == 42
    stats = queue.statistics()
    assert stats.done == 101 and stats.waiting == 0 and stats.workers == 3


async def test_send_waits_while_the_queue_is_full(
    actor_system: ActorSystem[Any],
) -> None:
    queue = await WorkQueue.start(actor_system, "jobs", capacity=3)
    for n in range(3):
        await queue.send(Task(n))  # no worker yet: they wait
    accepted: list[int] = []
    async with anyio.create_task_group() as tg:

        async def one_more() -> None:
            accepted.append(await queue.send(Task(3)))

        tg.start_soon(one_more)
        await wait_all_blocked()
        assert accepted == [] and queue.statistics().waiting == 3
        runs = Runs()
        worker = actor_system.spawn(Worker, runs, "w")
        WorkerController.spawn(actor_system, worker, queue.ref)
    with anyio.fail_after(10):
        await queue.wait_done()
    assert accepted == [4] and sorted(runs.by_job) == [1, 2, 3, 4]


async def test_a_durable_queue_started_again_hands_out_the_jobs_not_done(
    actor_system: ActorSystem[Any],
) -> None:
    journal = MemoryJournal()
    # A cleanup after each confirmation: the Sent events are all deleted.
    durable = DurableProducerQueue(journal, Codec(Task), cleanup_every=1)
    first = await WorkQueue.start(actor_system, "jobs", durable=durable)
    runs = Runs()
    worker = actor_system.spawn(Worker, runs, "w")
    WorkerController.spawn(actor_system, worker, first.ref, window=2)
    for n in range(5):
        await first.send(Task(n))
    with anyio.fail_after(10):
        await first.wait_done()
    first.stop()
    await first.ref.join()
    second = await WorkQueue.start(
        actor_system, "jobs", durable=DurableProducerQueue(journal, Codec(Task))
    )
    assert second.statistics().waiting == 0
    assert await second.send(Task(5)) == 6  # the ids go on
    third_runs = Runs()
    WorkerController.spawn(
        actor_system, actor_system.spawn(Worker, third_runs, "w2"), second.ref
    )
    with anyio.fail_after(10):
        await second.wait_done()
    assert sorted(third_runs.by_job) == [6]


async def test_jobs_stored_and_not_done_run_after_the_queue_started_again(
    actor_system: ActorSystem[Any],
) -> None:
    journal = MemoryJournal()
    first = await WorkQueue.start(
        actor_system, "jobs", durable=DurableProducerQueue(journal, Codec(Task))
    )
    for n in range(4):
        await first.send(Task(n))  # no worker: stored, never run
    first.stop()
    await first.ref.join()
    second = await WorkQueue.start(
        actor_system, "jobs", durable=DurableProducerQueue(journal, Codec(Task))
    )
    assert second.statistics().waiting == 4
    runs = Runs()
    WorkerController.spawn(
        actor_system, actor_system.spawn(Worker, runs, "w"), second.ref
    )
    with anyio.fail_after(10):
        await second.wait_done()
    assert sorted(runs.by_job) == [1, 2, 3, 4]


async def test_the_jobs_of_a_lost_worker_node_run_on_another(
    nats_server: NatsServer,
) -> None:
    runs = Runs()
    runs.gate = anyio.Event()  # never set: the held worker never finishes
    async with Cluster(nats_server.url, 3, types=[Task]) as nodes:
        a, b, c = nodes[0], nodes[1], nodes[2]
        queue = await WorkQueue.start(a, "jobs", name="jobs")

        async def find_on(system: ActorSystem[Any]) -> Any:
            return await system.remote.lookup(a.remote.node.node, "/user/jobs")

        WorkerController.spawn(
            b, b.spawn(Worker, runs, "held"), lambda: find_on(b), window=4
        )
        with anyio.fail_after(10):
            while queue.statistics().workers < 1:
                await wait_all_blocked()
        for n in range(4):
            await queue.send(Task(n))
        with anyio.fail_after(10):
            while queue.statistics().in_flight < 4:
                await wait_all_blocked()
        WorkerController.spawn(
            c, c.spawn(Worker, runs, "free"), lambda: find_on(c), window=4
        )
        nodes.kill(1)
        with anyio.fail_after(20):
            await queue.wait_done()
        assert sorted(runs.by_job) == [1, 2, 3, 4]
        assert runs.by_worker == {"free": 4}
        assert queue.statistics().redispatched == 4
