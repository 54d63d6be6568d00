"""Sharding over real node processes (``python -m actors.node --app ...``,
see ``_sharded_node.py``) on a JetStream KV bucket, driven from this process
(a node without the worker role: every entity runs in a node process). The
entities are event-sourced counters on one JetStream journal the nodes
share; the driver's workload mixes increments and reads:

* three nodes; the entities spread over them;
* SIGKILL one: its entities answer again from the others once its leases
  expired, with the totals they had (recovered from the journal);
* SIGSTOP another for longer than a lease, until the driver declared it
  down, then SIGCONT: it handles nothing of the shards it lost (the lease
  guard), finds itself downed and rejoins at once as a new incarnation;
* a fourth node joins: shards move to it;
* one leaves gracefully (SIGTERM) under load: nothing acknowledged is lost.

Then, from the nodes' logs: for every shard the lease intervals of different
nodes never overlap, every message was handled within its node's interval,
every acknowledged message was handled, and each entity handled its
messages in the order they were sent; and from the entities' state: every
reply and read gave the total of the increments acknowledged before it, and
at the end each entity's total is the number of its acknowledged increments
(no acknowledged increment lost).

The long mode (more entities and rounds, figures printed with ``-s``)::

    ACTORS_SHARDING_LONG=1 python -m pytest -s tests/sharding/test_processes.py

``ACTORS_SHARDING_ENTITIES`` and ``ACTORS_SHARDING_LEASE`` override its sizes.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import secrets
import signal
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from actors import ActorSystem
from actors.nats import NatsServer, connect
from actors.persistence import JetStreamJournal
from actors.remote import PhiAccrualFailureDetector, Remote
from actors.sharding import KeyValuePlacementStore, Sharding, shard_of
from actors.sharding.lowlevel import down_key

from ._sharded_node import ADD_TAG, READ_TAG, Add, Read, entity

APP = Path(__file__).with_name("_sharded_node.py")
LONG = os.environ.get("ACTORS_SHARDING_LONG") == "1"
ENTITIES = int(os.environ.get("ACTORS_SHARDING_ENTITIES", "10000" if LONG else "48"))
LEASE = float(os.environ.get("ACTORS_SHARDING_LEASE", "4" if LONG else "1"))
#: The node processes' event loops, in turn: every backend in one run.
BACKENDS = ("asyncio", "uvloop", "trio")
#: Seconds a node process may take to say it is ready.
START_TIMEOUT = 60.0
#: Concurrent askers of the driver.
ASKERS = 64 if LONG else 16
#: The share of increments followed by a read of the entity.
READS = 0.25


class Node:
    """A node process, its log and its name."""

    def __init__(self, name: str, process: anyio.abc.Process, log: Path) -> None:
        self.name = name
        self.process = process
        self.log = log
        assert process.stdout is not None
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def ready(self, err: Path) -> None:
        with anyio.fail_after(START_TIMEOUT):
            raw = await self.stdout.receive_until(b"\n", 1000)
        assert raw.split()[0] == b"ready", (raw, err.read_text())

    def events(self) -> list[dict[str, Any]]:
        with self.log.open(encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.endswith("\n")]


async def _start(
    url: str, cluster: str, name: str, bucket: str, backend: str, tmp: Path
) -> Node:
    log = tmp / f"{name}.jsonl"
    err = tmp / f"{name}.err"
    env = {
        **os.environ,
        "SHARDING_TEST_BUCKET": bucket,
        "SHARDING_TEST_STREAM": _stream(bucket),
        "SHARDING_TEST_LEASE": str(LEASE),
        "SHARDING_TEST_LOG": str(log),
    }
    process = await anyio.open_process(
        [
            sys.executable,
            "-m",
            "actors.node",
            "--connect",
            url,
            "--system",
            cluster,
            "--name",
            name,
            "--backend",
            backend,
            "--grace",
            "5",
            "--app",
            f"{APP}:serve",
        ],
        stdout=-1,
        stderr=err.open("ab"),
        env=env,
    )
    node = Node(name, process, log)
    await node.ready(err)
    return node


def _stream(bucket: str) -> str:
    """The entities' journal stream of a run (named after its bucket)."""
    return f"J{bucket}"


class Driver:
    """Asks every entity to add, numbering each entity's increments, and
    reads some of them after (seeded); keeps what was acknowledged, and
    counts the answers that were not the total of the increments
    acknowledged before them."""

    def __init__(self, sharding: Sharding, keys: list[str], seed: int) -> None:
        self.sharding = sharding
        self.keys = keys
        self.next = dict.fromkeys(keys, 0)
        self.acked: dict[str, list[int]] = defaultdict(list)
        self.failures = 0
        self.slowest = 0.0
        self.reads = 0
        self.wrong_totals = 0
        self.random = random.Random(seed)

    async def _ask(self, key: str, message: Add | Read) -> int:
        """Ask until answered (an ask that failed may have been handled: an
        increment is sent again with the same number)."""
        while True:
            try:
                reply = await self.sharding.entity_ref("counter", key).ask(
                    message, timeout=LEASE
                )
                assert type(reply) is int
                return reply
            except Exception:
                self.failures += 1
                await anyio.sleep(0.05)

    async def totals(self) -> dict[str, int]:
        """Every entity's total, read."""
        found: dict[str, int] = {}

        async def read(keys: list[str]) -> None:
            for key in keys:
                found[key] = await self._ask(key, Read())

        async with anyio.create_task_group() as tg:
            for i in range(ASKERS):
                tg.start_soon(read, self.keys[i::ASKERS])
        return found

    async def round(self) -> None:
        """One message to every entity, retried until acknowledged (with the
        same number: an ask that failed may have been handled)."""
        send, receive = anyio.create_memory_object_stream[str](len(self.keys))
        for key in self.keys:
            send.send_nowait(key)
        send.close()

        async def asker() -> None:
            async for key in receive:
                n = self.next[key]
                started = anyio.current_time()
                total = await self._ask(key, Add(n))
                self.slowest = max(self.slowest, anyio.current_time() - started)
                self.acked[key].append(n)
                self.next[key] = n + 1
                if total != n + 1:
                    self.wrong_totals += 1
                if self.random.random() < READS:
                    self.reads += 1
                    if await self._ask(key, Read()) != n + 1:
                        self.wrong_totals += 1

        async with anyio.create_task_group() as tg:
            for _ in range(ASKERS):
                tg.start_soon(asker)


def _tenures(events: list[dict[str, Any]]) -> dict[int, list[tuple[float, float]]]:
    """shard -> the intervals a node held it: from each acquire to its last
    valid-until, cut short by a release or a give-up."""
    found: dict[int, list[tuple[float, float]]] = defaultdict(list)
    open_: dict[int, list[float]] = {}
    for event in events:
        kind = event["e"]
        if kind == "h":
            continue
        shard = event["s"]
        if kind == "acquired":
            open_[shard] = [event["t"], event["u"]]
        elif kind == "renewed" and shard in open_:
            open_[shard][1] = event["u"]
        elif kind in ("released", "given-up") and shard in open_:
            start, until = open_.pop(shard)
            found[shard].append((start, min(until, event["t"])))
    for shard, (start, until) in open_.items():
        found[shard].append((start, until))  # killed, or ended holding it
    return found


# One run drives node processes on asyncio, uvloop and trio at once (the
# driver on asyncio): a run per backend would triple CI's time for nothing.
@pytest.mark.timeout(1800 if LONG else 180)
def test_sharded_nodes_survive_kill_stop_join_and_leave_one_owner_at_a_time(
    jetstream_server: NatsServer, tmp_path: Path
) -> None:
    anyio.run(_scenario, jetstream_server.url, tmp_path)


async def _scenario(url: str, tmp_path: Path) -> None:
    seed = int(os.environ.get("ACTORS_SHARDING_SEED", secrets.randbelow(2**32)))
    print(f"\nACTORS_SHARDING_SEED={seed}")
    cluster = "c" + secrets.token_hex(6)
    bucket = f"S{secrets.token_hex(6)}"
    keys = [f"e{i}" for i in range(ENTITIES)]
    figures: dict[str, float] = {}
    nodes: list[Node] = [None] * 3  # type: ignore[list-item]

    async def start_node(i: int) -> None:
        nodes[i] = await _start(url, cluster, f"n{i}", bucket, BACKENDS[i], tmp_path)

    async with (
        connect(url) as nc,
        JetStreamJournal(client=nc, stream=_stream(bucket), storage="memory"),
    ):
        pass  # the nodes' journal stream, made before they race to make it
    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(start_node, i)
    remote = Remote(
        url,
        system=cluster,
        node="driver",
        types=[(Add, ADD_TAG), (Read, READ_TAG)],
        # Down within about two leases: a shorter pause under load would
        # declare live nodes down (and they stop hosting until gone_ttl).
        heartbeat_interval=LEASE / 4,
        failure_detector=lambda: PhiAccrualFailureDetector(
            acceptable_heartbeat_pause=2 * LEASE, first_heartbeat_estimate=LEASE / 4
        ),
    )
    try:
        async with (
            ActorSystem(remote=remote) as system,
            connect(url) as nc,
        ):
            store = await KeyValuePlacementStore.open(nc.jetstream(), bucket, ttl=LEASE)
            async with Sharding(
                system, [entity()], store=store, node="driver"
            ) as sharding:
                driver = Driver(sharding, keys, seed)
                with anyio.fail_after(30):
                    while len(await store.list("regions/counter/")) < 3:
                        await anyio.sleep(0.05)
                started = anyio.current_time()
                await driver.round()
                figures["first_round_s"] = anyio.current_time() - started
                hosts = {e["k"] for n in nodes for e in n.events() if e["e"] == "h"}
                assert hosts == set(keys)
                assert all(any(e["e"] == "h" for e in n.events()) for n in nodes), (
                    "the entities are spread over the three nodes"
                )

                # SIGKILL n0: its entities answer again from the others.
                nodes[0].process.send_signal(signal.SIGKILL)
                killed = anyio.current_time()
                await driver.round()
                figures["recovered_after_kill_s"] = anyio.current_time() - killed

                # SIGSTOP n1 past its lease, until the driver's failure
                # detector declared it down (the mark in the store), then
                # SIGCONT: it finds itself downed and rejoins at once as a
                # new incarnation (its node process prints ready again).
                nodes[1].process.send_signal(signal.SIGSTOP)
                stopped = anyio.current_time()
                await driver.round()  # its shards move to n2 meanwhile
                await anyio.sleep(
                    max(0.0, LEASE + 1.0 - (anyio.current_time() - stopped))
                )
                with anyio.fail_after(30):
                    while await store.get(down_key("counter", "n1")) is None:
                        await anyio.sleep(0.05)
                nodes[1].process.send_signal(signal.SIGCONT)
                resumed = anyio.current_time()
                figures["recovered_after_stop_s"] = resumed - stopped
                await driver.round()
                await nodes[1].ready(tmp_path / "n1.err")
                figures["rejoined_after_cont_s"] = anyio.current_time() - resumed
                await driver.round()

                # n3 joins: shards move to it.
                nodes.append(
                    await _start(url, cluster, "n3", bucket, "asyncio", tmp_path)
                )
                joined = anyio.current_time()
                with anyio.fail_after(60):
                    while not any(e["e"] == "acquired" for e in nodes[3].events()):
                        await driver.round()
                figures["first_shard_on_joiner_s"] = anyio.current_time() - joined
                await driver.round()

                # n2 leaves gracefully while the driver asks.
                async with anyio.create_task_group() as tg:
                    tg.start_soon(driver.round)
                    await anyio.sleep(0.05)
                    nodes[2].process.send_signal(signal.SIGTERM)
                with anyio.fail_after(30):
                    assert await nodes[2].process.wait() == 0
                await driver.round()
                totals = await driver.totals()
                figures["rounds"] = 7
                figures["failed_asks_retried"] = driver.failures
                figures["slowest_ask_s"] = driver.slowest
    finally:
        for node in nodes:
            if node.process.returncode is None:
                node.process.send_signal(signal.SIGCONT)
                node.process.send_signal(signal.SIGTERM)
        with anyio.move_on_after(30):
            for node in nodes:
                await node.process.wait()
        for node in nodes:
            if node.process.returncode is None:
                node.process.kill()

    # -- the checks, from the nodes' logs ----------------------------------------
    by_node = {node.name: node.events() for node in nodes}
    handled: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    for name, events in by_node.items():
        for e in events:
            if e["e"] == "h":
                handled[e["k"]].append((e["t"], e["n"], name))
    tenures = {name: _tenures(events) for name, events in by_node.items()}
    overlaps = 0
    for shard in range(24):
        intervals = sorted(
            (start, end, name)
            for name, held in tenures.items()
            for start, end in held.get(shard, [])
        )
        for (_, end, a), (start, _, b) in itertools.pairwise(intervals):
            if a != b and start < end:
                overlaps += 1
    assert overlaps == 0
    outside = 0
    for key, seen in handled.items():
        shard = shard_of(key, 24)
        for t, _, name in seen:
            if not any(s <= t <= e for s, e in tenures[name].get(shard, [])):
                outside += 1
    assert outside == 0
    lost = sum(
        1
        for key, acked in driver.acked.items()
        for n in set(acked) - {n for _, n, _ in handled[key]}
    )
    assert lost == 0
    reordered = 0
    for seen in handled.values():
        numbers = [n for _, n, _ in sorted(seen)]
        reordered += sum(1 for x, y in itertools.pairwise(numbers) if y < x)
    assert reordered == 0
    # The event-sourced state: every total is its acknowledged increments.
    lost_increments = sum(
        max(0, driver.next[key] - total) for key, total in totals.items()
    )
    assert lost_increments == 0
    assert totals == driver.next
    assert driver.wrong_totals == 0
    figures.update(
        entities=ENTITIES,
        lease_s=LEASE,
        acknowledged=sum(len(a) for a in driver.acked.values()),
        handled=sum(len(h) for h in handled.values()),
        lost=lost,
        lost_increments=lost_increments,
        reads=driver.reads,
        wrong_totals=driver.wrong_totals,
        overlapping_leases=overlaps,
        handled_outside_lease=outside,
        reordered=reordered,
    )
    print("\nsharding process figures:", json.dumps(figures, sort_keys=True))
