"""Reliable delivery with real processes: a producer node process with a
durable queue (SQLite) is killed with SIGKILL at random points and started
again, while the consumer node (this process) keeps running; every message
the producer accepted (``send`` returned) is handled exactly once, in order,
and nothing is handled that was never stored.

The long mode runs many more rounds (figures printed with ``-s``)::

    ACTORS_DELIVERY_RUNS=30 python -m pytest -s tests/delivery/test_processes.py

``ACTORS_DELIVERY_SEED`` changes the random kill points (default 26).
"""

from __future__ import annotations

import random
import secrets
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem
from actors.delivery import ConsumerController, Delivery
from actors.nats import NatsServer
from actors.remote import Remote

from . import _producer_child
from ._consumer_child import Order
from ._kill_campaign import BACKENDS, Node, long_mode, node_group, start_node

pytestmark = pytest.mark.anyio

PRODUCER = _producer_child.__name__
RUNS, SEED = long_mode("ACTORS_DELIVERY_RUNS", "ACTORS_DELIVERY_SEED")
KILLS = 3
TOTAL = 150


class Ledger(Actor[Delivery[Order]]):
    """The consumer: counts each order it handled, in the order handled."""

    def __init__(self, handled: list[int]) -> None:
        self.handled = handled

    def receive(self, delivery: Delivery[Order]) -> None:
        self.handled.append(delivery.message.n)


async def start_producer(
    system: ActorSystem[Any],
    controller: ConsumerController,
    url: str,
    cluster: str,
    db: Path | str,
    backend: str,
    err: Path,
) -> Node:
    """A producer node process (``_producer_child``) once it is ready, with
    ``controller`` registered to its producer controller."""
    node = await start_node(
        "producer", PRODUCER, url, cluster, db, backend, TOTAL, err=err
    )
    controller.register_to(await system.remote.lookup("producer", "/user/producer"))
    return node


# About 20 s a run here (process start-ups); the long mode gets its time.
@pytest.mark.timeout(max(120, RUNS * 60))
async def test_a_killed_producer_process_resends_what_was_not_confirmed(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    tally: Counter[str] = Counter()
    for run in range(RUNS):
        cluster = "c" + secrets.token_hex(6)
        db = tmp_path / f"producer-{run}.db"
        err = tmp_path / f"producer-{run}.err"
        handled: list[int] = []
        accepted: set[int] = set()
        remote = Remote(
            nats_server.url, system=cluster, node="consumer", types=[(Order, "Order")]
        )
        async with ActorSystem(remote=remote) as system, node_group() as nodes:
            ledger = system.spawn(Ledger, handled)
            controller = ConsumerController.spawn(
                system, ledger, window=16, name="consumer"
            )
            for kill in range(KILLS + 1):
                backend = BACKENDS[(run + kill) % len(BACKENDS)]
                child = nodes[f"producer-{kill}"] = await start_producer(
                    system, controller, nats_server.url, cluster, db, backend, err
                )
                tally["restarts"] += kill > 0
                tally["resent_after_restart"] += int(child.ready[2])
                last = kill == KILLS
                # Kill after a random number of accepted messages.
                stop_after = rng.randint(1, 60)
                while True:
                    words = await child.line()
                    if words[0] == "done":
                        break
                    assert words[0] == "accepted", words
                    accepted.add(int(words[1]))
                    stop_after -= 1
                    if not last and stop_after == 0:
                        await child.kill()
                        tally["kills"] += 1
                        break
                if last:
                    assert await child.process.wait() == 0, child.stderr_tail()
                if words[0] == "done":
                    break
            with anyio.fail_after(30):
                await controller.wait_confirmed("orders", TOTAL)
            stats = controller.statistics()
        counts = Counter(handled)
        duplicates = sum(c - 1 for c in counts.values() if c > 1)
        assert duplicates == 0, counts.most_common(5)
        assert handled == list(range(1, TOTAL + 1))  # in order, none missing
        assert accepted <= set(handled)
        tally["runs"] += 1
        tally["accepted"] += len(accepted)
        tally["handled"] += len(handled)
        tally["dropped_by_dedup"] += stats.duplicates
    print(
        f"\ndelivery crash runs: {tally['runs']} runs, {tally['kills']} SIGKILLs, "
        f"{tally['accepted']} messages accepted, {tally['handled']} handled, "
        f"duplicates after dedup: 0, resent after a restart: "
        f"{tally['resent_after_restart']}, dropped by dedup: "
        f"{tally['dropped_by_dedup']} (seed {SEED})"
    )
