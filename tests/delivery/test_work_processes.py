"""A durable work queue with real processes: the queue's node and two
worker nodes, each killed with SIGKILL at a random point and started again.
Every accepted job runs, and a job runs twice only in the documented
window: its first run was by a worker killed after it, or before a kill of
the queue's process (its confirmation was lost with the node).

The long mode runs many more rounds (figures printed with ``-s``)::

    ACTORS_WORK_RUNS=10 python -m pytest -s tests/delivery/test_work_processes.py

``ACTORS_WORK_SEED`` changes the random kill points (default 26).
"""

from __future__ import annotations

import itertools
import os
import random
import secrets
import signal
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from actors.nats import NatsServer

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).with_name("_work_children.py")
RUNS = int(os.environ.get("ACTORS_WORK_RUNS", "1"))
SEED = int(os.environ.get("ACTORS_WORK_SEED", "26"))
BACKENDS = ("asyncio", "uvloop", "trio")
TOTAL = 400
LINE_TIMEOUT = 60.0


class Node:
    """A child process, its output lines, and when it was killed."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        assert process.stdout is not None
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def line(self) -> list[str]:
        with anyio.fail_after(LINE_TIMEOUT):
            raw = await self.stdout.receive_until(b"\n", 1000)
        return raw.decode().split()

    async def kill(self) -> float:
        at = time.time()
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        return at


@dataclass
class Run:
    """One run's cluster and files; starts its nodes."""

    index: int
    url: str
    cluster: str
    db: Path
    ledger: Path
    err: Path

    def backend(self, i: int) -> str:
        return BACKENDS[(self.index + i) % len(BACKENDS)]

    async def worker(self, name: str, i: int) -> Node:
        return await _start(
            "worker",
            self.url,
            self.cluster,
            str(self.ledger),
            self.backend(i),
            name,
            err=self.err,
        )

    async def queue(self, i: int) -> Node:
        return await _start(
            "queue",
            self.url,
            self.cluster,
            str(self.db),
            self.backend(i),
            str(TOTAL),
            err=self.err,
        )


async def _start(*args: str, err: Path) -> Node:
    process = await anyio.open_process(
        [sys.executable, str(CHILD), *args], stdout=-1, stderr=err.open("ab")
    )
    node = Node(process)
    words = await node.line()
    assert words[0] == "ready", (words, err.read_text())
    return node


@pytest.mark.timeout(max(180, RUNS * 90))
async def test_every_accepted_job_runs_through_kills_of_workers_and_queue(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    tally: Counter[str] = Counter()
    why: Counter[str] = Counter()
    for run in range(RUNS):
        cluster = "c" + secrets.token_hex(6)
        db, ledger = tmp_path / f"jobs-{run}.db", tmp_path / f"ledger-{run}.db"
        err = tmp_path / f"run-{run}.err"
        with sqlite3.connect(ledger) as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(
                "CREATE TABLE runs (job_id INTEGER, pid INTEGER, t REAL)"
            )
        this = Run(run, nats_server.url, cluster, db, ledger, err)

        nodes: dict[str, Node] = {}
        killed: dict[int, float] = {}  # pid -> when
        queue_kills: list[float] = []
        accepted: set[int] = set()
        try:
            nodes["w1"] = await this.worker("w1", 0)
            nodes["w2"] = await this.worker("w2", 1)
            nodes["queue"] = await this.queue(2)
            plan = ["w1", "w2", "queue"]
            rng.shuffle(plan)
            step = 0
            countdown = rng.randint(5, 30)
            while True:
                words = await nodes["queue"].line()
                if words[0] == "done":
                    break
                assert words[0] == "accepted", words
                accepted.add(int(words[1]))
                countdown -= 1
                if step < len(plan) and countdown == 0:
                    target = plan[step]
                    node = nodes[target]
                    assert node.process.returncode is None, err.read_text()
                    pid = node.process.pid
                    at = await node.kill()
                    killed[pid] = at
                    tally["kills"] += 1
                    if target == "queue":
                        queue_kills.append(at)
                        nodes["queue"] = await this.queue(3 + step)
                    else:
                        nodes[target] = await this.worker(target, 3 + step)
                    step += 1
                    countdown = rng.randint(5, 30)
            # The queue runs ahead of the lines read: on a slow machine it may
            # finish before the last kill (the figures say how many there were).
            assert step >= 2, "the queue finished before two kills"
        finally:
            for node in nodes.values():
                if node.process.returncode is None:
                    node.process.kill()
                await node.process.wait()
        with sqlite3.connect(ledger) as connection:
            rows = connection.execute("SELECT job_id, pid, t FROM runs").fetchall()
        runs: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for job_id, pid, at in rows:
            runs[job_id].append((pid, at))
        assert set(runs) == set(range(1, TOTAL + 1)), "a stored job never ran"
        assert accepted <= set(runs)
        for job_id, seen in runs.items():
            seen.sort(key=lambda item: item[1])
            for (pid, at), _later in itertools.pairwise(seen):
                if pid in killed and killed[pid] > at:
                    why["its worker was killed after the run"] += 1
                elif any(kill > at for kill in queue_kills):
                    why["the queue was killed after the run"] += 1
                else:
                    pytest.fail(f"job {job_id} ran twice outside the window: {seen}")
        tally["runs"] += 1
        tally["accepted"] += len(accepted)
        tally["jobs"] += len(runs)
        tally["twice"] += sum(len(seen) - 1 for seen in runs.values())
    print(
        f"\nwork queue crash runs: {tally['runs']} runs, {tally['kills']} SIGKILLs "
        f"(workers and queue), {tally['accepted']} jobs accepted, "
        f"{tally['jobs']} run, {tally['twice']} runs again: {dict(why)} "
        f"(seed {SEED})"
    )
