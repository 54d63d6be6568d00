"""Guarantees of the JetStream journal with real processes: a child that
persists at full speed is killed with SIGKILL at random points, and the
``nats-server`` under it is killed with SIGKILL at random points too and
started again on the same store directory (the child's client reconnects,
its unanswered appends are published again with the same ``Nats-Msg-Id``):
every event whose ask the child answered is recovered, in order, none twice,
no gap.

The long mode runs many more rounds (figures are printed with ``-s``)::

    ACTORS_PERSISTENCE_RUNS=40 python -m pytest -s \
        tests/persistence/test_jetstream_processes.py

``ACTORS_PERSISTENCE_SEED`` changes the random kill points (default 25).

The server runs with its default configuration: JetStream writes a message
to its file before it acknowledges it, and syncs the files to the disk every
two minutes (``sync_interval``). So a SIGKILL of the server (the operating
system and its page cache survive) loses no acknowledged write, which is
what these runs measure; an OS crash or a power cut on a single server may
lose the writes of the last interval unless it runs with ``jetstream {
sync_interval: always }`` (or the stream has replicas on other machines).
That is stated, not measured: nothing here cuts the power.
"""

from __future__ import annotations

import os
import random
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from actors.nats import NatsServer

from ._kill_campaign import (
    BACKENDS,
    Child,
    Tally,
    account,
    acked_numbers,
    kill,
    outcome,
    read_acks,
    start_writer,
    verify,
)
from .test_processes import LIMIT

RUNS = int(os.environ.get("ACTORS_PERSISTENCE_RUNS", "2"))
SEED = int(os.environ.get("ACTORS_PERSISTENCE_SEED", "25"))


def _kill_run(
    server: NatsServer, rng: random.Random, tally: Tally, run: int
) -> int:
    """One run: a stream written by three children in turn, each killed;
    the server killed and restarted under some of them. Returns the
    server restarts."""
    stream = f"RUN{run}"
    actors = rng.randint(1, 6)
    acked: dict[int, int] = defaultdict(int)
    restarts = 0
    where = ("--nats", server.url)
    for kill_ in range(3):
        backend = BACKENDS[(run * 3 + kill_) % len(BACKENDS)]
        child = start_writer(stream, actors, backend, acked, tally, run, *where)
        read_acks(child, acked, rng.randint(1, 200 * actors))
        if rng.random() < 0.5:
            # The server dies under the writing child and comes back on the
            # same store; the child goes on (its asks wait meanwhile).
            server.stop(kill=True)
            server.start()
            restarts += 1
            read_acks(child, acked, rng.randint(1, 100 * actors))
        kill(child, acked, tally)
        if rng.random() < 0.3:
            server.stop(kill=True)  # right after the child: both gone
            server.start()
            restarts += 1
    account(verify(stream, actors, *where), acked, tally, run)
    return restarts


# Each run takes seconds (process and server starts); the long mode many.
@pytest.mark.timeout(120 + 60 * RUNS)
def test_acknowledged_events_survive_sigkill_of_the_writer_and_of_the_server(
    nats_server_factory: Callable[..., NatsServer], tmp_path: Path
) -> None:
    server = nats_server_factory(store_dir=tmp_path / "store")
    rng = random.Random(SEED)
    tally = Tally()
    restarts = 0
    for run in range(RUNS):
        restarts += _kill_run(server, rng, tally, run)
    print(
        f"\nJetStream kill runs: {tally.runs} runs, {tally.kills} SIGKILLs of the "
        f"writer, {restarts} SIGKILLs and restarts of nats-server, {tally.events} "
        f"events recovered, {tally.acknowledged} acknowledged, {tally.losses} lost "
        f"(seed {SEED})"
    )
    assert tally.losses == 0, tally.lost
    assert tally.acknowledged > 0


@pytest.mark.timeout(120 + 60 * RUNS)
def test_two_processes_released_at_once_on_one_persistence_id(
    nats_server_factory: Callable[..., NatsServer], tmp_path: Path
) -> None:
    server = nats_server_factory(store_dir=tmp_path / "store")
    rounds = max(2, RUNS // 10)
    for round_ in range(rounds):
        stream = f"RACE{round_}"
        children = [
            Child(
                stream, "write", "--actors", "1", "--limit", str(LIMIT),
                "--wait-go", "--nats", server.url,
            )
            for _ in "ab"
        ]
        for child in children:
            assert (child.line() or "").startswith("ready 0 0"), child.stderr()
        for child in children:
            child.send("go")
        stopped, survived = outcome(children)
        # Both recovered the empty log: the first to store event 1 is the
        # only writer; the other's first write already conflicts.
        assert acked_numbers(stopped) == []
        assert acked_numbers(survived) == list(range(1, LIMIT + 1))
        assert verify(stream, 1, "--nats", server.url) == {0: (LIMIT, 1)}
    print(
        f"\nJetStream, released at once: {rounds} rounds, one survivor each, one "
        "writer in each log"
    )
