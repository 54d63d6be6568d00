"""A sharded account service over node processes that survives killing one.

    python examples/sharded.py [--nodes 3] [--accounts 200] [--seconds 10]
                               [--kill-after 3] [--lease 2]

(needs the ``remote``, ``server`` and ``persistence`` extras:
``pip install "anyio-actors[remote,server,persistence]"``.)

It starts a private ``nats-server`` with JetStream and ``--nodes`` node
processes (``python -m actors.node --app examples/sharded.py:serve``). Each
node hosts the ``account`` entities: event-sourced actors addressed by key,
their events in one SQLite journal the nodes share, their shards placed and
leased in a JetStream KV bucket. This process is a node too, without the
``accounts`` role: it only sends. Its tellers deposit 1 into random accounts
for ``--seconds`` seconds, each deposit an ask retried until acknowledged
(numbered per account, so an account applies a retried deposit once); after
``--kill-after`` seconds it kills one node with SIGKILL. Its accounts start
again on the other nodes once their leases have expired, recovered from the
journal. At the end it reads every balance: each equals the deposits
acknowledged to it, and the last line says so::

    survived: 3 nodes, 1 killed, 200 accounts, 1734 deposits acknowledged, lost 0
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from actors import ActorSystem
from actors.nats import connect, embedded_nats_server
from actors.persistence import Codec, Effect, EventSourcedActor, SqliteJournal
from actors.remote import PhiAccrualFailureDetector, Remote
from actors.sharding import Entity, KeyValuePlacementStore, Sharding

HERE = Path(__file__).resolve()
SYSTEM = "sharded"

# -- the account entity ------------------------------------------------------------


class Deposit(msgspec.Struct, frozen=True):
    """Add ``amount``; ``n`` numbers the sender's deposits to this account
    (a deposit retried after a lost answer is applied once). The reply: the
    balance."""

    amount: int
    n: int


class GetBalance(msgspec.Struct, frozen=True):
    pass


class Deposited(msgspec.Struct, frozen=True):
    amount: int
    n: int


class Balance(msgspec.Struct, frozen=True):
    total: int = 0
    last: int = -1  # the last deposit number applied


#: The messages' tags, the same on every node.
TYPES = [(Deposit, "sharded.Deposit"), (GetBalance, "sharded.GetBalance")]


class Account(EventSourcedActor[Any, Deposited, Balance]):
    codec = Codec(Deposited)

    def __init__(self, key: str, journal: SqliteJournal) -> None:
        self.persistence_id = f"account-{key}"
        self.journal = journal

    def empty_state(self) -> Balance:
        return Balance()

    def on_command(self, state: Balance, command: Any) -> Effect[Deposited, Balance]:
        match command:
            case Deposit(amount, n) if n > state.last:
                event = Deposited(amount, n)
                return Effect.persist(event).then_reply(lambda s: s.total)
            case Deposit():  # applied already: the answer was lost
                return Effect.reply(state.total)
            case GetBalance():
                return Effect.reply(state.total)
        return Effect.unhandled()

    def on_event(self, state: Balance, event: Deposited) -> Balance:
        return Balance(state.total + event.amount, event.n)


def accounts(journal: SqliteJournal | None = None) -> Entity[Any]:
    def make(key: str) -> Account:
        assert journal is not None, "only nodes with the accounts role host them"
        return Account(key, journal)

    return Entity("account", make, shards=32, role="accounts", passivate_after=60.0)


# -- a node process: python -m actors.node --app examples/sharded.py:serve ----------


@asynccontextmanager
async def serve(system: ActorSystem) -> AsyncIterator[Sharding]:
    """Host the accounts on this node until it leaves (``--app``)."""
    remote: Any = system.remote
    for cls, tag in TYPES:
        remote.register_type(cls, tag)
    urls, options = remote.connect_options
    lease = float(os.environ["SHARDED_LEASE"])
    async with (
        SqliteJournal(os.environ["SHARDED_JOURNAL"]) as journal,
        connect(urls, **options) as nc,
    ):
        store = await KeyValuePlacementStore.open(
            nc.jetstream(), os.environ["SHARDED_BUCKET"], ttl=lease
        )
        async with Sharding(
            system,
            [accounts(journal)],
            store=store,
            node=remote.node.node,
            roles={"accounts"},
        ) as sharding:
            yield sharding


# -- this process: the server, the nodes, the tellers ---------------------------------


async def _start_node(url: str, name: str, env: dict[str, str]) -> anyio.abc.Process:
    process = await anyio.open_process(
        [
            sys.executable,
            "-m",
            "actors.node",
            "--connect",
            url,
            "--system",
            SYSTEM,
            "--name",
            name,
            "--app",
            f"{HERE}:serve",
        ],
        stdout=-1,
        env=env,
    )
    assert process.stdout is not None
    with anyio.fail_after(60):
        line = await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 999)
    if not line.startswith(b"ready"):
        raise RuntimeError(f"node {name} did not start: {line!r}")
    return process


async def main(args: argparse.Namespace) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="sharded-"))
    env = {
        **os.environ,
        "SHARDED_JOURNAL": str(workdir / "accounts.db"),
        "SHARDED_BUCKET": "sharded",
        "SHARDED_LEASE": str(args.lease),
    }
    keys = [f"acct-{i}" for i in range(args.accounts)]
    acked = dict.fromkeys(keys, 0)
    slowest = 0.0
    rng = random.Random(args.seed)
    processes: list[anyio.abc.Process] = []
    async with embedded_nats_server(
        jetstream=True, store_dir=str(workdir / "js")
    ) as server:
        try:
            async with anyio.create_task_group() as tg:
                for i in range(args.nodes):

                    async def start(name: str = f"node{i}") -> None:
                        processes.append(await _start_node(server.url, name, env))

                    tg.start_soon(start)
            print(f"{args.nodes} nodes up at {server.url}", flush=True)
            # A node lost is noticed within about a lease (its shards can
            # move no earlier): heartbeats four times a lease.
            remote = Remote(
                server.url,
                system=SYSTEM,
                node="teller",
                types=TYPES,
                heartbeat_interval=args.lease / 4,
                failure_detector=lambda: PhiAccrualFailureDetector(
                    acceptable_heartbeat_pause=args.lease,
                    first_heartbeat_estimate=args.lease / 4,
                ),
            )
            async with (
                ActorSystem(remote=remote) as system,
                connect(server.url) as nc,
            ):
                store = await KeyValuePlacementStore.open(
                    nc.jetstream(), "sharded", ttl=args.lease
                )
                async with Sharding(
                    system, [accounts()], store=store, node="teller"
                ) as sharding:
                    ends = anyio.current_time() + args.seconds
                    busy: set[str] = set()

                    async def teller() -> None:
                        nonlocal slowest
                        while anyio.current_time() < ends:
                            key = rng.choice(keys)
                            if key in busy:  # one deposit per account at a time
                                await anyio.sleep(0)
                                continue
                            busy.add(key)
                            deposit = Deposit(1, acked[key])
                            started = anyio.current_time()
                            ref = sharding.entity_ref("account", key)
                            while True:
                                try:
                                    await ref.ask(deposit, timeout=args.lease)
                                    break
                                except Exception:
                                    await anyio.sleep(0.05)  # retried
                            slowest = max(slowest, anyio.current_time() - started)
                            acked[key] += 1
                            busy.discard(key)

                    async def killer() -> None:
                        await anyio.sleep(args.kill_after)
                        victim = processes[0]
                        victim.send_signal(signal.SIGKILL)
                        print(f"killed node pid {victim.pid} (SIGKILL)", flush=True)

                    async with anyio.create_task_group() as tg:
                        for _ in range(16):
                            tg.start_soon(teller)
                        if args.nodes > 1:
                            tg.start_soon(killer)
                    lost = 0
                    for key in keys:
                        balance = await sharding.entity_ref("account", key).ask(
                            GetBalance(), timeout=30
                        )
                        lost += acked[key] - balance
        finally:
            for process in processes:
                if process.returncode is None:
                    process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(30):
                for process in processes:
                    await process.wait()
    total = sum(acked.values())
    print(f"slowest deposit: {slowest:.2f} s (the lease is {args.lease} s)")
    print(
        f"survived: {args.nodes} nodes, {int(args.nodes > 1)} killed, "
        f"{len(keys)} accounts, {total} deposits acknowledged, lost {lost}",
        flush=True,
    )
    return 0 if lost == 0 else 1


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--accounts", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--kill-after", type=float, default=3.0)
    parser.add_argument("--lease", type=float, default=2.0, help="seconds")
    parser.add_argument("--seed", type=int, default=27)
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(anyio.run(main, _parse(sys.argv[1:])))
