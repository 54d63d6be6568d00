"""A child process for the crash tests: event-sourced ledgers on a SQLite
journal, writing as fast as they can, or recovering and reporting.

    python _durable_child.py PATH write [--actors N] [--backend B]
        [--synchronous FULL|NORMAL] [--prefix P] [--limit N] [--wait-go]
    python _durable_child.py PATH verify [--actors N] [--prefix P]

With ``--nats URL`` the journal is a ``JetStreamJournal`` on that server
and PATH is its stream's name (the crash tests across a nats-server
restart: its client reconnects and its appends are retried, so a write
waits for the server to come back instead of failing).

``write``: each ledger recovers (printing ``ready I COUNT``, its recovered
count), then once every one has (``go``, or after a ``go`` line on standard
input with ``--wait-go``) each asks its ledger for the next number without
pause and prints ``ack I N`` once the ask is answered (the event numbered N is
stored): a line the parent reads counts as acknowledged. A ledger whose write
finds another writer prints ``conflict I`` and stops writing; ``--limit`` stops
at N events. Killed with SIGKILL at any point by the parent.

``verify``: each ledger recovers (its event handler refuses an event that is
not the next number: a gap, a repeat or a reordering fails the recovery) and
prints ``count I N RUNS`` (RUNS: the maximal runs of one writer's
events in its log); then the journal's raw events are checked to be
numbered 1..N with the payload N, and ``raw I ok`` printed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from actors import ActorSystem, Request
from actors.persistence import (
    Codec,
    Effect,
    EventSourcedActor,
    JetStreamJournal,
    Journal,
    SequenceConflict,
    Snapshots,
    SqliteJournal,
)
from actors.persistence._durable import GET_STATE  # the test kit's state query


@dataclass
class Next(Request[int]):
    pass


@dataclass
class Added:
    n: int


@dataclass
class Tally:
    count: int = 0


class Ledger(EventSourcedActor[Next, Added, Tally]):
    codec = Codec(Added, Tally)
    snapshots = Snapshots(every=64, keep=2)

    def __init__(self, persistence_id: str) -> None:
        self.persistence_id = persistence_id

    def empty_state(self) -> Tally:
        return Tally()

    def on_command(self, state: Tally, command: Next) -> Effect[Added, Tally]:
        return Effect.persist(Added(state.count + 1)).then_reply(lambda s: s.count)

    def on_event(self, state: Tally, event: Added) -> Tally:
        if event.n != state.count + 1:
            raise AssertionError(f"event {event.n} after {state.count}")
        return Tally(event.n)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def open_journal(args: argparse.Namespace) -> Journal:
    if args.nats:
        return JetStreamJournal(
            args.nats,
            stream=args.path,
            write_timeout=120.0,
            connect_options={"max_reconnect_attempts": -1, "reconnect_wait": 0.05},
        )
    return SqliteJournal(args.path, synchronous=args.synchronous)


#: Seconds an ask waits: longer than a nats-server restart.
ASK_TIMEOUT = 180


async def write(args: argparse.Namespace) -> None:
    async with (
        open_journal(args) as journal,
        ActorSystem(journal=journal, log_failures=False) as system,
    ):
        refs = [system.spawn(Ledger, f"{args.prefix}{i}") for i in range(args.actors)]
        for index, ref in enumerate(refs):
            (state, _, _) = await ref.ask(GET_STATE, timeout=ASK_TIMEOUT)
            say(f"ready {index} {state.count}")
        if args.wait_go:
            await anyio.to_thread.run_sync(sys.stdin.readline)
        say("go")

        async def drive(index: int, ref: Any) -> None:
            while True:
                try:
                    n = await ref.ask(Next(), timeout=ASK_TIMEOUT)
                except SequenceConflict:
                    say(f"conflict {index}")
                    return
                say(f"ack {index} {n}")
                if args.limit and n >= args.limit:
                    return

        async with anyio.create_task_group() as tg:
            for index, ref in enumerate(refs):
                tg.start_soon(drive, index, ref)
        say("done")


async def verify(args: argparse.Namespace) -> None:
    async with (
        open_journal(args) as journal,
        ActorSystem(journal=journal, log_failures=False) as system,
    ):
        for index in range(args.actors):
            persistence_id = f"{args.prefix}{index}"
            ref = system.spawn(Ledger, persistence_id, restart="temporary")
            (state, seq, _) = await ref.ask(GET_STATE, timeout=ASK_TIMEOUT)
            stored = await journal.read_events(persistence_id, 1)
            # Runs of one writer's events: 1 + the times the writer changes.
            runs = sum(
                1
                for before, event in zip([None, *stored], stored, strict=False)
                if before is None or before.writer != event.writer
            )
            say(f"count {index} {state.count} {runs}")
            numbers = [event.sequence_nr for event in stored]
            codec = Ledger.codec
            assert codec is not None
            values = [codec.decode(e.manifest, e.payload).n for e in stored]
            ok = (
                numbers == values == list(range(1, state.count + 1))
                and seq == state.count
            )
            say(f"raw {index} {'ok' if ok else 'bad'}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("mode", choices=["write", "verify"])
    parser.add_argument("--actors", type=int, default=4)
    parser.add_argument("--backend", default="asyncio")
    parser.add_argument("--synchronous", default="FULL")
    parser.add_argument("--prefix", default="ledger-")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--wait-go", action="store_true")
    parser.add_argument("--nats", default="")
    args = parser.parse_args()
    backend, options = args.backend, {}
    if backend == "uvloop":
        import uvloop

        backend, options = "asyncio", {"loop_factory": uvloop.new_event_loop}
    run = write if args.mode == "write" else verify
    anyio.run(run, args, backend=backend, backend_options=options)


if __name__ == "__main__":
    main()
