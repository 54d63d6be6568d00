"""Reliable delivery with real processes through two more faults:

* the consumer's node process is killed with SIGKILL mid-stream and started
  again (a new node incarnation, registering to the producer): the producer
  (this process) sends it every unconfirmed message again; what the dead
  consumer handled and could not confirm comes again, and the consumer's
  ledger, keyed by ``Delivery.key`` in the effect's transaction, skips it:
  every accepted message has its effect once, in order, and the messages
  seen again are at most the consumer's window per kill;
* ``nats-server`` is killed with SIGKILL mid-stream and started again on
  the same store, under a producer process whose durable queue is a
  JetStream journal on that server: its appends wait and are published
  again, the lost protocol messages are resent, and the consumer (this
  process) handles every accepted message once, in order.

The long mode runs more rounds (figures printed with ``-s``)::

    ACTORS_DELIVERY_RUNS=10 python -m pytest -s tests/delivery/test_fault_processes.py

``ACTORS_DELIVERY_SEED`` changes the random kill points (default 26).
"""

from __future__ import annotations

import random
import secrets
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from actors import ActorSystem
from actors.delivery import ConsumerController, ProducerController
from actors.nats import NatsServer
from actors.remote import Remote

from . import _consumer_child
from ._consumer_child import Order
from ._kill_campaign import (
    BACKENDS,
    Node,
    long_mode,
    node_group,
    restart_broker,
    start_node,
)
from .test_processes import TOTAL, Ledger, start_producer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> Any:
    # This process only relays; the children run on each backend in turn.
    return "asyncio"


CONSUMER = _consumer_child.__name__
RUNS, SEED = long_mode("ACTORS_DELIVERY_RUNS", "ACTORS_DELIVERY_SEED")
#: The consumer child's window: what a dead consumer may have handled and
#: not confirmed, so what may come again per kill.
WINDOW = 16


async def _consumer(
    url: str, cluster: str, ledger: Path, backend: str, err: Path
) -> Node:
    return await start_node(
        "consumer", CONSUMER, url, cluster, ledger, backend, err=err
    )


async def _send_all(producer: ProducerController[Any], accepted: list[int]) -> None:
    for n in range(1, TOTAL + 1):
        accepted.append(await producer.send(Order(n)))


# About 15 s a run here (process start-ups); the long mode gets its time.
@pytest.mark.timeout(max(120, RUNS * 60))
async def test_a_killed_consumer_node_gets_the_unconfirmed_again_and_skips_by_key(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    tally: Counter[str] = Counter()
    for run in range(RUNS):
        cluster = "c" + secrets.token_hex(6)
        ledger = tmp_path / f"ledger-{run}.db"
        err = tmp_path / f"consumer-{run}.err"
        remote = Remote(
            nats_server.url, system=cluster, node="producer", types=[(Order, "Order")]
        )
        async with ActorSystem(remote=remote) as system, node_group() as nodes:
            producer: ProducerController[Any] = await ProducerController.start(
                system, "orders", resend_interval=0.2, name="producer"
            )
            accepted: list[int] = []

            async with anyio.create_task_group() as tg:
                tg.start_soon(_send_all, producer, accepted)
                for kill in range(3):
                    backend = BACKENDS[(run + kill + SEED) % len(BACKENDS)]
                    child = nodes[f"consumer-{kill}"] = await _consumer(
                        nats_server.url, cluster, ledger, backend, err
                    )
                    last = kill == 2
                    stop_after = rng.randint(1, 50)
                    handled = 0
                    while True:
                        words = await child.line()
                        assert words[0] in ("handled", "again"), words
                        tally[words[0]] += 1
                        handled += words[0] == "handled"
                        if int(words[1]) == TOTAL:
                            break
                        if not last and handled >= stop_after:
                            await child.kill()
                            tally["kills"] += 1
                            break
                    if last:
                        with anyio.fail_after(30):
                            await producer.wait_confirmed(TOTAL)
                    if int(words[1]) == TOTAL:
                        break
        with sqlite3.connect(ledger) as db:
            rows = db.execute("SELECT seq_nr, n FROM effects ORDER BY rowid").fetchall()
        # Each accepted message had its effect once, in order; nothing else.
        assert accepted == list(range(1, TOTAL + 1))
        assert rows == [(n, n) for n in range(1, TOTAL + 1)]
        tally["runs"] += 1
        tally["effects"] += len(rows)
    # Seen again only from the window a dead consumer could not confirm.
    assert tally["again"] <= tally["kills"] * WINDOW
    print(
        f"\nconsumer-node kill runs: {tally['runs']} runs, {tally['kills']} "
        f"SIGKILLs, {tally['effects']} effects ({TOTAL} per run), handed over "
        f"again and skipped by key: {tally['again']}, duplicates after dedup: 0 "
        f"(seed {SEED})"
    )


@pytest.mark.timeout(max(120, RUNS * 60))
async def test_a_nats_server_restart_mid_stream_loses_nothing(
    nats_server_factory: Callable[..., NatsServer], tmp_path: Path
) -> None:
    rng = random.Random(SEED + 1)
    server = nats_server_factory(store_dir=tmp_path / "store")
    tally: Counter[str] = Counter()
    for run in range(RUNS):
        cluster = "c" + secrets.token_hex(6)
        err = tmp_path / f"producer-{run}.err"
        handled: list[int] = []
        accepted: set[int] = set()
        remote = Remote(
            server.url, system=cluster, node="consumer", types=[(Order, "Order")]
        )
        async with ActorSystem(remote=remote) as system, node_group() as nodes:
            controller = ConsumerController.spawn(
                system, system.spawn(Ledger, handled), window=16, name="consumer"
            )
            backend = BACKENDS[(run + SEED) % len(BACKENDS)]
            stream = f"jetstream:DLV{run}"
            child = nodes["producer"] = await start_producer(
                system, controller, server.url, cluster, stream, backend, err
            )
            restart_after = rng.randint(1, 100)
            while True:
                words = await child.line()
                if words[0] == "done":
                    break
                assert words[0] == "accepted", words
                accepted.add(int(words[1]))
                restart_after -= 1
                if restart_after == 0:
                    await restart_broker(server)
                    tally["restarts"] += 1
            assert await child.process.wait() == 0, child.stderr_tail()
            with anyio.fail_after(30):
                await controller.wait_confirmed("orders", TOTAL)
            stats = controller.statistics()
        assert Counter(handled).most_common(1)[0][1] == 1  # none twice
        assert handled == list(range(1, TOTAL + 1))  # in order, none missing
        assert accepted <= set(handled)
        tally["runs"] += 1
        tally["accepted"] += len(accepted)
        tally["dropped_by_dedup"] += stats.duplicates
    assert tally["restarts"] == RUNS
    print(
        f"\nnats-server restart runs: {tally['runs']} runs, {tally['restarts']} "
        f"SIGKILLs and restarts of nats-server mid-stream, {tally['accepted']} "
        f"messages accepted, each handled once in order, dropped by dedup: "
        f"{tally['dropped_by_dedup']} (seed {SEED})"
    )
