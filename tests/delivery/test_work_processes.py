"""The durable work queue's kill campaign, all faults in one run: the
queue's node (the coordinator) and two worker nodes in processes of their
own, each SIGKILLed once at a random point and started again, and the
``nats-server`` SIGKILLed and started again once, in a seeded random order.

Every accepted job runs (the workers' ledger has every job id the queue
gave out), its idempotent effect is there once (duplicates after dedup:
0), and every job that ran twice is attributed, from what the processes
printed and recorded (never from timing guesses), to the documented
window: its completion was not known to the queue when a process was lost,

* its worker was SIGKILLed after the run (before its confirmation reached
  the queue),
* its worker's node was declared down (alive: a pause, the broker's
  restart) with the job unconfirmed, so the queue gave it to another,
* or the queue that handed it out was SIGKILLed before it stored the job's
  ``Done``;

anything else fails the test. The test paces the queue's sends (``send N``
on its stdin) so the queue cannot finish before every fault was done.

The long mode runs many more rounds (figures printed with ``-s``)::

    ACTORS_WORK_RUNS=20 python -m pytest -s tests/delivery/test_work_processes.py

``ACTORS_WORK_SEED`` changes the random fault points (default 26).
"""

from __future__ import annotations

import itertools
import random
import secrets
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from actors.nats import NatsServer

from . import _work_children
from ._kill_campaign import (
    BACKENDS,
    Node,
    Plan,
    long_mode,
    node_group,
    restart_broker,
    start_node,
)

pytestmark = pytest.mark.anyio

CHILD = _work_children.__name__
RUNS, SEED = long_mode("ACTORS_WORK_RUNS", "ACTORS_WORK_SEED")
#: Jobs a run sends at least.
TOTAL = 300
#: Jobs the queue may send past what the test has read, so it is sending
#: (and its workers running) whenever a fault strikes.
AHEAD = 24

KILLED_WORKER = "its worker was SIGKILLed after the run"
DOWNED_WORKER = "its worker's node was declared down (alive) with the job unconfirmed"
KILLED_QUEUE = "the queue that handed it out was SIGKILLed before storing its Done"


@pytest.fixture
def anyio_backend() -> Any:
    # This process only relays; the children run on each backend in turn
    # (the queue and each worker on a different one, rotating per start).
    return "asyncio"


@dataclass
class Campaign:
    """One run: its nodes, its plan, and what the processes said."""

    index: int
    server: NatsServer
    cluster: str
    db: Path
    ledger: Path
    err: Path
    nodes: dict[str, Node]
    starts: int = 0
    #: Job ids accepted (``send`` returned), as printed.
    accepted: set[int] = field(default_factory=set)
    #: pid -> when it was SIGKILLed.
    killed: dict[int, float] = field(default_factory=dict)
    #: A worker stream's epoch -> the pid of the queue that made it.
    epochs: dict[str, int] = field(default_factory=dict)
    #: A worker stream's epoch -> the jobs given to others from it.
    redispatched: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    grant: int = 0
    broker_restarts: int = 0

    def backend(self) -> str:
        self.starts += 1
        return BACKENDS[(self.index + self.starts) % len(BACKENDS)]

    async def start(self, name: str) -> Node:
        url = self.server.url
        if name == "queue":
            node = await start_node(
                name,
                CHILD,
                "queue",
                url,
                self.cluster,
                self.db,
                self.backend(),
                err=self.err,
                stdin=True,
            )
        else:
            node = await start_node(
                name,
                CHILD,
                "worker",
                url,
                self.cluster,
                self.ledger,
                self.backend(),
                name,
                err=self.err,
            )
        self.nodes[name] = node
        return node

    def observe(self, queue: Node, words: list[str]) -> bool:
        """Note a line of the queue's; True for an ``accepted`` line."""
        if words[0] == "accepted":
            self.accepted.add(int(words[1]))
            return True
        if words[0] == "worker":
            self.epochs[words[1]] = queue.pid
        elif words[0] == "redispatched":
            self.redispatched[words[1]].update(map(int, words[2:]))
        else:
            raise AssertionError(("an unexpected line", words, queue.stderr_tail()))
        return False

    async def pace(self, plan: Plan, next_job_id: int) -> None:
        """Let the queue send up to past every fault left, and ``AHEAD``."""
        read = max(self.accepted, default=0)
        self.grant = max(self.grant, max(read, next_job_id - 1) + plan.lines_left)
        await self.nodes["queue"].tell("send", self.grant + AHEAD)

    async def fault(self, target: str, plan: Plan) -> None:
        if target == "broker":
            await restart_broker(self.server)
            self.broker_restarts += 1
            await self.pace(plan, 0)
            return
        node = self.nodes[target]
        self.killed[node.pid] = await node.kill()
        if target == "queue":
            # What it printed before it died is still in the pipe.
            while True:
                try:
                    words = await node.line(timeout=10)
                except AssertionError:
                    break  # its output ended
                self.observe(node, words)
            queue = await self.start("queue")
            await self.pace(plan, int(queue.ready[1]))
        else:
            await self.start(target)
            await self.pace(plan, 0)


async def _run(campaign: Campaign, rng: random.Random) -> int:
    """Start the nodes, do every fault of a seeded plan, finish; return the
    last job id."""
    await campaign.start("w1")
    await campaign.start("w2")
    queue = await campaign.start("queue")
    plan = Plan(rng, ("w1", "w2", "queue", "broker"))
    await campaign.pace(plan, int(queue.ready[1]))
    while not plan.done:
        queue = campaign.nodes["queue"]
        if campaign.observe(queue, await queue.line()):
            fault = plan.progress()
            if fault is not None:
                await campaign.fault(fault.target, plan)
    queue = campaign.nodes["queue"]
    await queue.tell("send", max(TOTAL, campaign.grant + AHEAD))
    await queue.tell("finish")
    while True:
        words = await queue.line()
        if words[0] == "done":
            return int(words[1])
        campaign.observe(queue, words)


def _why(
    campaign: Campaign, job_id: int, first: tuple[int, str, float], again: float
) -> str:
    """Why ``job_id`` ran again (at ``again``) after its ``first`` run
    (pid, epoch, time): a reason of the documented window, or the test
    fails."""
    pid, epoch, at = first
    if campaign.killed.get(pid, 0.0) > at:
        return KILLED_WORKER
    if job_id in campaign.redispatched.get(epoch, ()):
        return DOWNED_WORKER
    if campaign.epochs.get(epoch) in campaign.killed:
        return KILLED_QUEUE
    pytest.fail(
        f"job {job_id} ran again at {again} outside the window: first run "
        f"{first}, kills {campaign.killed}, queue of its stream "
        f"{campaign.epochs.get(epoch)}"
    )


# About 15 s a run (process start-ups, a killed worker's detection).
@pytest.mark.timeout(max(120, RUNS * 60))
async def test_every_accepted_job_runs_through_kills_of_each_process_and_the_broker(
    nats_server_factory: Callable[..., NatsServer], tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    server = nats_server_factory()
    tally: Counter[str] = Counter()
    why: Counter[str] = Counter()
    for index in range(RUNS):
        ledger = tmp_path / f"ledger-{index}.db"
        _work_children.ledger(str(ledger)).close()
        async with node_group() as nodes:
            campaign = Campaign(
                index,
                server,
                "c" + secrets.token_hex(6),
                tmp_path / f"jobs-{index}.db",
                ledger,
                tmp_path / f"run-{index}.err",
                nodes,
            )
            last = await _run(campaign, rng)
        with sqlite3.connect(ledger) as db:
            rows = db.execute("SELECT job_id, pid, epoch, t FROM runs").fetchall()
            effects = [job_id for (job_id,) in db.execute("SELECT job_id FROM effects")]
        runs: dict[int, list[tuple[int, str, float]]] = defaultdict(list)
        for job_id, pid, epoch, at in rows:
            runs[job_id].append((pid, epoch, at))
        assert last >= TOTAL
        assert campaign.accepted <= set(range(1, last + 1))
        assert set(runs) == set(range(1, last + 1)), "a stored job never ran"
        assert sorted(effects) == list(range(1, last + 1))  # each effect once
        for job_id, seen in runs.items():
            seen.sort(key=lambda run: run[2])
            for first, (_, _, again) in itertools.pairwise(seen):
                why[_why(campaign, job_id, first, again)] += 1
        assert campaign.broker_restarts == 1
        assert len(campaign.killed) == 3  # each node process once
        tally["runs"] += 1
        tally["kills"] += len(campaign.killed)
        tally["broker restarts"] += campaign.broker_restarts
        tally["jobs"] += last
        tally["runs again"] += len(rows) - last
    print(
        f"\nwork queue kill campaign: {tally['runs']} runs, {tally['kills']} "
        f"SIGKILLs (each worker and the queue once a run), "
        f"{tally['broker restarts']} nats-server SIGKILLs and restarts, "
        f"{tally['jobs']} jobs, each run, each effect once (duplicates after "
        f"dedup: 0); jobs run again: {tally['runs again']}: {dict(why)} "
        f"(seed {SEED})"
    )
