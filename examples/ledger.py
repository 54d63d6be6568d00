"""Ledger: the main job's files, counted into durable per-directory totals that
survive Ctrl-C and ``kill -9``.

    python examples/ledger.py [PATH] [--journal ledger.db] [--workers 16]
    python examples/ledger.py --reset     # forget what ledger.db holds

The same real files as ``examples/fan_out.py`` (by default this Python's
standard library). Each directory has a ledger, an event-sourced actor whose
events (``FileCounted``: a file's lines, words, bytes and SHA-256) are stored
in one SQLite file; worker actors read and count the files in worker threads
and hand each result to its directory's ledger, which answers once the event
is stored. Interrupted (Ctrl-C, a kill, a power cut with the journal's default
``synchronous=FULL``), a second run recovers every ledger from the journal,
skips the files they hold, counts the rest, and ends with the same totals as
an uninterrupted run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from fan_out import THIRD_PARTY, analyze, list_files
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from actors import Actor, ActorRef, ActorStopped, ActorSystem, Request, SystemNotRunning
from actors.persistence import (
    Codec,
    Effect,
    EventSourcedActor,
    Snapshots,
    SqliteJournal,
)

# -- the ledger of one directory -------------------------------------------------


@dataclass
class FileCounted:
    """The event: one file of the directory, counted."""

    name: str
    lines: int
    words: int
    bytes: int
    sha256: str


@dataclass
class Totals:
    """A directory's state: its counted files and their sums."""

    directory: str = ""
    files: dict[str, str] = field(default_factory=dict)  # name -> SHA-256
    lines: int = 0
    words: int = 0
    bytes: int = 0


@dataclass
class Count(Request[bool]):
    """Store a file's counts (True), unless it is counted already (False)."""

    counted: FileCounted


@dataclass
class GetTotals(Request[Totals]):
    pass


class DirectoryLedger(EventSourcedActor[Count | GetTotals, FileCounted, Totals]):
    """The durable totals of one directory."""

    codec = Codec(FileCounted, Totals)
    snapshots = Snapshots(every=200)

    def __init__(self, directory: str) -> None:
        self.directory = directory
        digest = hashlib.sha256(directory.encode()).hexdigest()[:32]
        self.persistence_id = f"directory-{digest}"

    def empty_state(self) -> Totals:
        return Totals(self.directory)

    def on_command(
        self, state: Totals, command: Count | GetTotals
    ) -> Effect[FileCounted, Totals]:
        match command:
            case Count(counted) if counted.name in state.files:
                return Effect.reply(False)  # again, after an interruption
            case Count(counted):
                return Effect.persist(counted).then_reply(lambda _: True)
            case GetTotals():
                return Effect.reply(state)
        return Effect.unhandled()

    def on_event(self, state: Totals, event: FileCounted) -> Totals:
        files = dict(state.files)
        files[event.name] = event.sha256
        return Totals(
            state.directory,
            files,
            state.lines + event.lines,
            state.words + event.words,
            state.bytes + event.bytes,
        )


# -- the workers --------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    path: str
    ledger: ActorRef[Any]


class Worker(Actor):
    """Counts a file in a worker thread and hands the result to its ledger;
    replies once the ledger has stored it (True), or with the error."""

    async def receive(self, job: Job) -> bool | str:
        try:
            stats = await anyio.to_thread.run_sync(analyze, job.path)
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"
        counted = FileCounted(
            os.path.basename(job.path),
            stats.lines,
            stats.words,
            stats.bytes,
            stats.sha256,
        )
        try:
            stored: bool = await job.ledger.ask(Count(counted), timeout=60.0)
        except (ActorStopped, SystemNotRunning):  # the run is being interrupted
            return "interrupted"
        return stored


# -- the run ------------------------------------------------------------------------


@dataclass
class Summary:
    files: int = 0  #: files found
    resumed: int = 0  #: counted by an earlier run
    counted: int = 0  #: counted by this run
    failed: int = 0  #: unreadable
    directories: int = 0
    lines: int = 0
    words: int = 0
    bytes: int = 0
    digests: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0


async def ledger(
    path: str,
    journal_path: str,
    workers: int = 16,
    skip: frozenset[str] = frozenset(),
    progress: Progress | None = None,
    plain: bool = False,
) -> Summary:
    """Count every file under ``path`` into the durable ledgers of
    ``journal_path``, going on from what an earlier run stored.

    Args:
        path: the directory to walk.
        journal_path: the SQLite file of the ledgers (made if missing).
        workers: worker actors (>= 1).
        skip: names of directories not to walk into.
        progress: a rich Progress to update, or None.
        plain: print ``stored N/M`` after each file stored (for scripts).

    Returns:
        The totals over every file the ledgers hold, with every file's
        SHA-256, how many were counted by an earlier run and by this one.

    Raises:
        ValueError: ``workers`` < 1, or ``path`` is not a directory.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if not os.path.isdir(path):
        raise ValueError(f"not a directory: {path}")
    started = time.perf_counter()
    files = await anyio.to_thread.run_sync(list_files, path, skip)
    by_directory: dict[str, list[str]] = {}
    for file in files:
        by_directory.setdefault(os.path.dirname(file), []).append(file)
    summary = Summary(files=len(files), directories=len(by_directory))
    async with (
        SqliteJournal(journal_path) as journal,
        ActorSystem(journal=journal) as system,
    ):
        ledgers = {
            directory: system.spawn(DirectoryLedger, directory, name=f"ledger-{i}")
            for i, directory in enumerate(by_directory)
        }
        todo: list[Job] = []
        for directory, ref in ledgers.items():
            held = (await ref.ask(GetTotals(), timeout=60.0)).files  # recovered
            summary.resumed += len(held)
            todo += [
                Job(f, ref)
                for f in by_directory[directory]
                if os.path.basename(f) not in held
            ]
        task = None
        if progress is not None:
            task = progress.add_task("counting files", total=len(files))
            progress.update(task, completed=summary.resumed)
        pool = system.spawn_pool(
            Worker, workers, routing="shared_queue", name="workers"
        )
        jobs = iter(todo)

        async def work() -> None:
            for job in jobs:  # shared by the tasks: each takes the next job
                outcome = await pool.ask(job, timeout=120.0)
                if outcome is True:
                    summary.counted += 1
                    if plain:
                        print(
                            f"stored {summary.resumed + summary.counted}/{len(files)}",
                            flush=True,
                        )
                elif outcome is not False:
                    summary.failed += 1
                if progress is not None and task is not None:
                    progress.advance(task)

        async with anyio.create_task_group() as tg:
            for _ in range(workers * 2):  # a job in hand and one queued per worker
                tg.start_soon(work)
        for ref in ledgers.values():
            totals: Totals = await ref.ask(GetTotals(), timeout=60.0)
            summary.lines += totals.lines
            summary.words += totals.words
            summary.bytes += totals.bytes
            for name, digest in totals.files.items():
                summary.digests[os.path.join(totals.directory, name)] = digest
    summary.elapsed = time.perf_counter() - started
    return summary


def print_summary(console: Console, path: str, journal: str, summary: Summary) -> None:
    console.print(f"ledger of {path} in {journal}")
    table = Table()
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("files", f"{summary.files:,}")
    table.add_row("counted by an earlier run", f"{summary.resumed:,}")
    table.add_row("counted by this run", f"{summary.counted:,}")
    table.add_row("unreadable files", f"{summary.failed:,}")
    table.add_row("directories (ledgers)", f"{summary.directories:,}")
    table.add_row("lines", f"{summary.lines:,}")
    table.add_row("words", f"{summary.words:,}")
    table.add_row("bytes", f"{summary.bytes:,}")
    table.add_row("elapsed seconds", f"{summary.elapsed:.2f}")
    console.print(table)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        help="directory to walk (default: the Python standard library)",
    )
    parser.add_argument("--journal", default="ledger.db", help="the SQLite file")
    parser.add_argument("--workers", type=int, default=16, help="worker actors")
    parser.add_argument(
        "--backend", choices=["asyncio", "uvloop", "trio"], default="asyncio"
    )
    parser.add_argument(
        "--reset", action="store_true", help="delete the journal first, and start over"
    )
    parser.add_argument(
        "--plain", action="store_true", help="print a line per file stored, no bar"
    )
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    skip: frozenset[str] = frozenset()
    if args.path is None:
        args.path, skip = sysconfig.get_paths()["stdlib"], THIRD_PARTY
    if not os.path.isdir(args.path):
        parser.error(f"not a directory: {args.path}")
    if args.reset:
        for suffix in ("", "-wal", "-shm"):
            Path(args.journal + suffix).unlink(missing_ok=True)
    backend, options = "asyncio", {}
    if args.backend == "uvloop":
        import uvloop

        options = {"loop_factory": uvloop.new_event_loop}
    elif args.backend == "trio":
        backend = "trio"
    console = Console()
    progress = None
    if not args.plain:
        progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
    try:
        if progress is not None:
            progress.start()
        try:
            summary = anyio.run(
                ledger,
                args.path,
                args.journal,
                args.workers,
                skip,
                progress,
                args.plain,
                backend=backend,
                backend_options=options,
            )
        finally:
            if progress is not None:
                progress.stop()
    except KeyboardInterrupt:
        console.print(
            f"interrupted: what was counted is in {args.journal}; run again to go on"
        )
        raise SystemExit(130) from None
    print_summary(console, args.path, args.journal, summary)


if __name__ == "__main__":
    main(sys.argv[1:])
