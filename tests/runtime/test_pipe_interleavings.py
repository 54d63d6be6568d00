"""Seeded random interleavings of piped work with completions, restarts and
stops: every job ends exactly one way, its outcome delivered once to the
incarnation that started it, counted as a dead letter, or cancelled with its
incarnation (no outcome; a job cancelled before its task ran never calls its
work at all). Nothing is lost silently, nothing is delivered twice or to the
wrong instance."""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, OneForOne, Result

from ._support import wait_all_blocked

pytestmark = pytest.mark.anyio

JOBS = 12


class Board:
    """What happened to each job."""

    def __init__(self) -> None:
        self.gates = [anyio.Event() for _ in range(JOBS)]
        self.delivered: list[tuple[int, int]] = []  # (job, incarnation)
        self.cancelled: list[int] = []
        self.entered: set[int] = set()  # jobs whose work was called
        self.started_by: dict[int, int] = {}
        self.next = 0


class Worker(Actor):
    instances = 0

    def __init__(self, board: Board) -> None:
        Worker.instances += 1
        self.board = board
        self.me = Worker.instances

    async def job(self, n: int) -> int:
        self.board.entered.add(n)
        try:
            await self.board.gates[n].wait()
        except BaseException:
            self.board.cancelled.append(n)
            raise
        return n

    def receive(self, message: Any) -> Any:
        board = self.board
        if message == "start" and board.next < JOBS:
            n = board.next
            board.next += 1
            board.started_by[n] = self.me
            self.context.run(lambda: self.job(n), then=lambda r: ("done", r, self.me))
        elif message == "boom":
            raise RuntimeError("boom")
        elif isinstance(message, tuple) and message[0] == "done":
            _, result, starter = message
            # Delivered to the instance that started it, and no other.
            assert starter == self.me
            board.delivered.append((result.value, self.me))
        return None


@pytest.mark.parametrize("seed", range(6))
async def test_every_piped_job_ends_exactly_one_way(seed: int) -> None:
    rng = random.Random(seed)
    board = Board()
    lenient = OneForOne(max_restarts=1000)
    async with ActorSystem(strategy=lenient, log_failures=False) as system:
        ref = system.spawn(Worker, board)
        for _ in range(60):
            op = rng.random()
            if op < 0.45:
                ref.tell("start")
            elif op < 0.85:
                board.gates[rng.randrange(JOBS)].set()
            else:
                ref.tell("boom")
            if rng.random() < 0.5:
                await wait_all_blocked()
        ref.stop()
        for gate in board.gates:
            gate.set()
        await ref.join()
    letters = [
        d.message.value
        for d in system.dead_letters.recent
        if isinstance(d.message, Result)
    ]
    delivered = [n for n, _ in board.delivered]
    # Cancelled before its task ran (a restart right after the start): its
    # work was never called, so it cannot have recorded its cancellation.
    never_ran = [n for n in range(board.next) if n not in board.entered]
    outcomes = sorted(delivered + letters + board.cancelled + never_ran)
    assert outcomes == list(range(board.next))
    for n, incarnation in board.delivered:
        assert board.started_by[n] == incarnation
