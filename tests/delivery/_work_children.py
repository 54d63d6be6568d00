"""The node processes of the durable work queue's kill campaign
(``test_work_processes``), started as ``python -m`` this module.

``queue URL CLUSTER DB BACKEND``: the node ``queue`` with a durable
``WorkQueue`` (SQLite ``DB``) named ``jobs``; prints ``ready <next job id>
<jobs waiting>``, then sends ``Task(n)`` jobs as the test allows: on the
line ``send N`` (stdin) it sends until job ``N`` is accepted, printing
``accepted <id>`` after each ``send`` returned; on ``finish`` it waits until
every job is done and prints ``done <last job id>``. Its observations, as
they happen: ``worker <epoch> <node>`` when a worker registered (the
numbering of its stream: each run records it), ``redispatched <epoch>
<job id> ...`` when it gave a worker's unconfirmed jobs to others (that
worker stopped, or its node was declared down).

``worker URL CLUSTER LEDGER BACKEND NAME``: the node ``NAME`` with a worker
that finds ``/user/jobs`` on ``queue`` (again whenever the queue's actor
ends); each run is recorded in the SQLite ``LEDGER`` before its handler
returns: in ``runs`` (job id, process id, epoch, time: every run) and, in
the same transaction, in ``effects`` keyed by the job id (the idempotent
effect ``Delivery.job_id`` is for: a job run again is skipped there).
Prints ``ready``.
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

from ._kill_campaign import Commands, run_child


class Task(msgspec.Struct, frozen=True):
    n: int


TYPES = [(Task, "Task")]


def detector() -> PhiAccrualFailureDetector:
    # A killed peer is down after about 3 s; a restart of nats-server (about
    # a second without heartbeats) and a loaded machine's pauses are not
    # taken for a death.
    return PhiAccrualFailureDetector(
        first_heartbeat_estimate=FAST_HEARTBEAT_INTERVAL,
        acceptable_heartbeat_pause=3.0,
        min_std_deviation=FAST_HEARTBEAT_INTERVAL,
    )


def node(url: str, cluster: str, name: str) -> Remote:
    return Remote(
        url,
        system=cluster,
        node=name,
        types=TYPES,
        heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
        failure_detector=detector,
    )


def ledger(path: str) -> sqlite3.Connection:
    """The worker's ledger (made if missing): every run, and the effects."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS runs"
        " (job_id INTEGER, pid INTEGER, epoch TEXT, t REAL)"
    )
    db.execute("CREATE TABLE IF NOT EXISTS effects (job_id INTEGER PRIMARY KEY)")
    return db


class ObservedQueue(WorkQueue[Task]):
    """The work queue, saying on stdout when a worker registers and when a
    worker's jobs go to others (what the test attributes a second run to)."""

    def add_worker(self, consumer: ActorRef[Any]) -> bool:
        added = super().add_worker(consumer)
        if added:
            node = getattr(consumer, "node", "?")
            print("worker", self.workers[consumer].epoch, node, flush=True)
        return added

    def remove_worker(self, consumer: ActorRef[Any]) -> None:
        channel = self.workers.get(consumer)
        if channel is not None:
            back = [p.job_id for p in channel.unconfirmed if p.job_id in self.jobs]
            print("redispatched", channel.epoch, *back, flush=True)
        super().remove_worker(consumer)


async def queue(url: str, cluster: str, db: str) -> None:
    journal = SqliteJournal(db, synchronous="NORMAL")
    async with journal, ActorSystem(remote=node(url, cluster, "queue")) as system:
        jobs = await ObservedQueue.start(
            system,
            "jobs",
            durable=DurableProducerQueue(journal, Codec(Task)),
            capacity=8,
            resend_interval=0.3,
            name="jobs",
        )
        print("ready", jobs.next_job_id, jobs.statistics().waiting, flush=True)
        commands = Commands()
        while True:
            words = await commands.next()
            if words[0] == "finish":
                break
            assert words[0] == "send", words
            up_to = int(words[1])
            while jobs.next_job_id <= up_to:
                job_id = await jobs.send(Task(jobs.next_job_id))
                print("accepted", job_id, flush=True)
        await jobs.wait_done()
        print("done", jobs.next_job_id - 1, flush=True)


class Worker(Actor[Delivery[Task]]):
    def __init__(self, path: str) -> None:
        self.db = ledger(path)

    def receive(self, delivery: Delivery[Task]) -> None:
        with self.db:  # the run and its effect in one transaction
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?)",
                (delivery.job_id, os.getpid(), delivery.epoch, time.time()),
            )
            self.db.execute(
                "INSERT OR IGNORE INTO effects VALUES (?)", (delivery.job_id,)
            )


async def worker(url: str, cluster: str, path: str, name: str) -> None:
    async with ActorSystem(remote=node(url, cluster, name)) as system:

        async def find() -> ActorRef[Any]:
            return await system.remote.lookup("queue", "/user/jobs")

        WorkerController.spawn(
            system, system.spawn(Worker, path), find, window=4, retry_interval=0.1
        )
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    role, url, cluster, path, backend = sys.argv[1:6]
    if role == "queue":
        run_child(queue, url, cluster, path, backend=backend)
    else:
        run_child(worker, url, cluster, path, sys.argv[6], backend=backend)
