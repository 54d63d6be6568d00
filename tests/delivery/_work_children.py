"""The processes of the work queue crash tests.

``python _work_children.py queue URL CLUSTER DB BACKEND TOTAL``: the node
``queue`` with a durable ``WorkQueue`` (SQLite) named ``jobs``; sends
``Task(n)`` until ``TOTAL`` jobs are accepted, printing ``accepted <id>``
after each ``send`` returned, then ``done`` once every job is done.

``python _work_children.py worker URL CLUSTER LEDGER BACKEND NAME``: the
node ``NAME`` with a worker that finds ``/user/jobs`` on ``queue`` (again
after it restarts) and records each run in the SQLite ``LEDGER`` (job id,
process id, time) before its handler returns; prints ``ready``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from typing import Any

import anyio
import msgspec

from actors import Actor, ActorRef, ActorSystem
from actors.delivery import Delivery, DurableProducerQueue, WorkerController, WorkQueue
from actors.persistence import Codec, SqliteJournal
from actors.remote import PhiAccrualFailureDetector, Remote
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL


class Task(msgspec.Struct, frozen=True):
    n: int


TYPES = [(Task, "Task")]


def detector() -> PhiAccrualFailureDetector:
    # A killed peer is down after about 2 s; a loaded machine's pauses are
    # not taken for a death.
    return PhiAccrualFailureDetector(
        first_heartbeat_estimate=FAST_HEARTBEAT_INTERVAL,
        acceptable_heartbeat_pause=2.0,
        min_std_deviation=FAST_HEARTBEAT_INTERVAL,
    )


def node(url: str, cluster: str, name: str) -> Remote:
    """A node that tells a killed peer in about 2 s."""
    return Remote(
        url,
        system=cluster,
        node=name,
        types=TYPES,
        heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
        failure_detector=detector,
    )


async def queue(url: str, cluster: str, db: str, total: int) -> None:
    remote = node(url, cluster, "queue")
    journal = SqliteJournal(db, synchronous="NORMAL")
    async with journal, ActorSystem(remote=remote) as system:
        durable = DurableProducerQueue(journal, Codec(Task))
        jobs: WorkQueue[Any] = await WorkQueue.start(
            system,
            "jobs",
            durable=durable,
            capacity=8,
            resend_interval=0.3,
            name="jobs",
        )
        print("ready", jobs.next_job_id, jobs.statistics().waiting, flush=True)
        while jobs.next_job_id <= total:
            job_id = await jobs.send(Task(jobs.next_job_id))
            print("accepted", job_id, flush=True)
        await jobs.wait_done()
        print("done", flush=True)


class Worker(Actor[Delivery[Task]]):
    def __init__(self, ledger: str) -> None:
        self.db = sqlite3.connect(ledger, timeout=30, isolation_level=None)

    def receive(self, delivery: Delivery[Task]) -> None:
        self.db.execute(
            "INSERT INTO runs VALUES (?, ?, ?)",
            (delivery.job_id, os.getpid(), time.time()),
        )


async def worker(url: str, cluster: str, ledger: str, name: str) -> None:
    remote = node(url, cluster, name)
    async with ActorSystem(remote=remote) as system:

        async def find() -> ActorRef[Any]:
            return await system.remote.lookup("queue", "/user/jobs")

        WorkerController.spawn(
            system, system.spawn(Worker, ledger), find, window=4, retry_interval=0.1
        )
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    role, url, cluster, path, backend, last = sys.argv[1:7]
    name, options = (
        ("asyncio", {"use_uvloop": True}) if backend == "uvloop" else (backend, {})
    )
    if role == "queue":
        anyio.run(
            queue, url, cluster, path, int(last), backend=name, backend_options=options
        )
    else:
        anyio.run(
            worker, url, cluster, path, last, backend=name, backend_options=options
        )
