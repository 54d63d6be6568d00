"""Fan out: count lines, words and bytes and hash every file under a directory.

    python examples/fan_out.py [PATH] [--workers 16] [--drain 64] [--backend trio]
    python examples/fan_out.py [PATH] --processes 2   # workers in 2 processes
    python examples/fan_out.py [PATH] --processes 2 --durable   # a durable queue

A root actor aggregates; a feeder child walks ``PATH`` (default: this Python's
standard library, present on every machine) and sends each file's path, with
backpressure, to W worker actors in turn. A worker reads its file in a worker
thread (so the event loop never blocks on disk), counts lines, words and bytes,
computes a SHA-256, and tells the root. The root shows a progress bar while it
works and prints a summary table at the end.

With ``--processes N`` the same workers run in N node processes on this
machine (``actors.remote``: a pool across processes, through an embedded NATS
server; needs the ``remote`` extra), so the work uses every core. A pool's
jobs are at-least-once when a node process is lost, so the root counts each
file once.

With ``--durable`` too, each path is a job of a durable work queue
(``actors.delivery.WorkQueue`` on a SQLite journal, ``--journal FILE``, a
temporary one by default): stored before it counts as sent, pulled by
workers in the node processes, and done when a worker's handler returned
the file's figures (the reply of the feeder's ``ask``). A job whose node
process dies before its confirmation got out runs again on another node;
the root counts each file once, so the totals stay exact.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

try:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
    )
    from rich.table import Table
except ModuleNotFoundError:  # the examples extra
    sys.exit('examples/fan_out.py needs rich: pip install "anyio-actors[examples]"')

from actors import Actor, ActorRef, ActorSystem

if TYPE_CHECKING:
    from actors.delivery import Delivery, WorkQueue
    from actors.persistence import Journal

# -- messages ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileStats:
    """What a worker found in one file."""

    path: str
    lines: int
    words: int
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class FileFailed:
    """A file a worker could not read."""

    path: str
    error: str


@dataclass(frozen=True, slots=True)
class Expect:
    """From the feeder: how many files it found."""

    files: int


@dataclass
class Summary:
    """The totals over every file read."""

    files: int = 0
    lines: int = 0
    words: int = 0
    bytes: int = 0
    failed: int = 0
    largest: list[tuple[int, str]] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0
    startup: float = 0.0


# -- the work ------------------------------------------------------------------


def analyze(path: str) -> FileStats:
    """Count lines, words and bytes of one file and hash it (blocking)."""
    data = Path(path).read_bytes()
    return FileStats(
        path=path,
        lines=data.count(b"\n"),
        words=len(data.split()),
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


#: Directories the default walk of the standard library leaves out: what pip
#: installed there is not the standard library.
THIRD_PARTY = frozenset({"site-packages", "dist-packages"})


def list_files(root: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Every regular file under ``root``, in a stable order, leaving out
    directories named in ``skip`` (blocking)."""
    found: list[str] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in skip)
        for name in sorted(files):
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append(path)
    return found


# -- actors --------------------------------------------------------------------


class Worker(Actor):
    """Analyzes the files it is sent and tells the results to the root.

    In a worker thread by default, so the event loop never blocks on disk;
    ``in_thread=False`` on the event loop's own thread, for a node process,
    whose loop exists for this work (no thread hop: half the CPU per file).
    """

    def __init__(self, root: ActorRef[Any], in_thread: bool = True) -> None:
        self.root = root
        self.in_thread = in_thread

    async def receive(self, message: Any) -> None:
        if isinstance(message, str):
            try:
                if self.in_thread:
                    stats = await anyio.to_thread.run_sync(analyze, message)
                else:
                    stats = analyze(message)
            except OSError as exc:
                self.root.tell(FileFailed(message, f"{type(exc).__name__}: {exc}"))
            else:
                self.root.tell(stats)


class FileJob(Actor):
    """A job of the durable queue: analyzes ``delivery.message`` (a path) on
    the event loop's thread (a node process's loop is there for this work)
    and returns the figures, which confirm the job and answer its ``ask``."""

    def receive(self, delivery: Delivery[str]) -> FileStats | FileFailed:
        try:
            return analyze(delivery.message)
        except OSError as exc:
            return FileFailed(delivery.message, f"{type(exc).__name__}: {exc}")


class DurableWorker(Actor):
    """A worker of the durable queue in a node process (a pool member): a
    ``FileJob`` actor behind a ``WorkerController`` that joins ``queue``
    and holds ``window`` jobs at a time."""

    def __init__(self, queue: ActorRef[Any], window: int) -> None:
        self.queue = queue
        self.window = window

    def on_start(self) -> None:
        from actors.delivery import WorkerController

        job = self.context.spawn(FileJob, name="job")
        WorkerController.spawn(self.context, job, self.queue, window=self.window)

    def receive(self, message: Any) -> None:
        return None  # the pool sends it nothing: the queue feeds its worker


class Feeder(Actor):
    """Walks the tree and sends the paths to the workers in turn, or (with a
    durable ``queue``) asks the queue for each path's figures, at most
    ``in_flight`` at a time, and tells them to the root."""

    def __init__(
        self,
        path: str,
        workers: list[ActorRef[Any]],
        skip: frozenset[str],
        queue: WorkQueue[str] | None = None,
        in_flight: int = 64,
    ) -> None:
        self.path = path
        self.workers = workers
        self.skip = skip
        self.queue = queue
        self.in_flight = in_flight

    async def on_start(self) -> None:
        files = await anyio.to_thread.run_sync(list_files, self.path, self.skip)
        root = self.context.parent
        root.tell(Expect(len(files)))
        queue = self.queue
        if queue is not None:
            room = anyio.Semaphore(self.in_flight)

            async def one(path: str) -> None:
                try:
                    # Returns once a worker's handler returned (the job was
                    # stored before, and is run again if its node dies).
                    root.tell(await queue.ask(path))
                finally:
                    room.release()

            async with anyio.create_task_group() as tg:
                for path in files:
                    await room.acquire()
                    tg.start_soon(one, path)
            return
        workers = self.workers
        for index, path in enumerate(files):
            await workers[index % len(workers)].send(path)  # backpressure


class Root(Actor):
    """Spawns the feeder and the workers, aggregates, and signals the end."""

    def __init__(
        self,
        path: str,
        workers: int,
        drain: int,
        capacity: int,
        done: anyio.Event,
        progress: Progress | None,
        skip: frozenset[str],
        processes: int = 0,
        journal: Journal | None = None,
    ) -> None:
        self.path = path
        self.processes = processes
        self.journal = journal
        self.queue: WorkQueue[str] | None = None
        self.failed: set[str] = set()
        self.skip = skip
        self.worker_count = workers
        self.drain = drain
        self.capacity = capacity
        self.done = done
        self.progress = progress
        self.task: Any = None
        self.expected: int | None = None
        self.summary = Summary()
        self.started = time.perf_counter()
        self.error: BaseException | None = None

    async def on_start(self) -> None:
        me = self.context.self_ref
        workers: list[Any]
        if self.processes and self.journal is not None:
            from actors.delivery import DurableProducerQueue, WorkQueue
            from actors.persistence import Codec

            # A durable queue here; a worker per pool member in the node
            # processes pulls its jobs (window: jobs each one holds).
            self.queue = await WorkQueue.start(
                self.context,
                "files",
                durable=DurableProducerQueue(self.journal, Codec(str)),
                capacity=self.capacity,
                resend_interval=2.0,
                name="files",
            )
            pool = self.context.system.remote.spawn_pool(
                DurableWorker,
                self.queue.ref,
                4,
                processes=self.processes,
                workers=max(1, self.worker_count // self.processes),
                name="workers",
            )
            if not await self._ready(pool):
                return
            workers = []
        elif self.processes:
            # One pool across the node processes; its workers pull paths.
            pool = self.context.system.remote.spawn_pool(
                Worker,
                me,
                False,  # each node process's loop is there for this work
                processes=self.processes,
                workers=max(1, self.worker_count // self.processes),
                # A deep window (workers * prefetch jobs per node): the
                # round trip for more work (through the NATS server, on the
                # same cores) hides behind work, and jobs and reports travel
                # in fewer, larger messages (each write costs a system call).
                prefetch=16,
                capacity=self.capacity,
                name="workers",
            )
            if not await self._ready(pool):
                return
            workers = [pool]
        else:
            workers = [
                self.context.spawn(
                    Worker,
                    me,
                    name=f"worker-{i}",
                    capacity=self.capacity,
                    drain=self.drain,
                )
                for i in range(self.worker_count)
            ]
        self.context.spawn(
            Feeder,
            self.path,
            workers,
            self.skip,
            self.queue,
            self.capacity,
            name="feeder",
        )
        if self.progress is not None:
            self.task = self.progress.add_task("reading files", total=None)

    async def _ready(self, pool: Any) -> bool:
        """Wait for the pool's members; False (and the error kept) if a node
        cannot start."""
        try:
            await pool.wait_ready(timeout=60.0)
        except Exception as exc:  # a node cannot start: fan_out raises it
            self.error = exc
            self.done.set()
            return False
        # The work is timed from here, as in one process (the node
        # processes' start-up is a row of its own in the summary).
        now = time.perf_counter()
        self.summary.startup = now - self.started
        self.started = now
        return True

    def receive(self, message: Any) -> Summary | BaseException | None:
        summary = self.summary
        if isinstance(message, FileStats):
            if message.path in summary.digests:
                return None  # again, after a node process was lost
            summary.files += 1
            summary.lines += message.lines
            summary.words += message.words
            summary.bytes += message.bytes
            summary.digests[message.path] = message.sha256
            summary.largest.append((message.bytes, message.path))
            if len(summary.largest) > 20:
                summary.largest.sort(reverse=True)
                del summary.largest[5:]
        elif isinstance(message, FileFailed):
            if message.path in self.failed:
                return None
            self.failed.add(message.path)
            summary.failed += 1
        elif isinstance(message, Expect):
            self.expected = message.files
            if self.progress is not None:
                self.progress.update(self.task, total=message.files)
        elif message == "summary":
            return summary if self.error is None else self.error
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=summary.files + summary.failed)
        if (
            self.expected is not None
            and summary.files + summary.failed == self.expected
        ):
            summary.largest.sort(reverse=True)
            del summary.largest[5:]
            summary.elapsed = time.perf_counter() - self.started
            self.done.set()
        return None


async def fan_out(
    path: str,
    workers: int = 16,
    drain: int = 64,
    capacity: int = 64,
    progress: Progress | None = None,
    skip: frozenset[str] = frozenset(),
    processes: int = 0,
    durable: bool = False,
    journal: str | None = None,
) -> Summary:
    """Analyze every file under ``path`` with ``workers`` worker actors.

    Args:
        path: the directory to walk.
        workers: how many worker actors (>= 1).
        drain: items a worker takes from its mailbox per wake (>= 1).
        capacity: each worker's mailbox quota (>= 1): the feeder waits when a
            worker is that far behind.
        progress: a rich Progress to update, or None.
        skip: names of directories not to walk into.
        processes: 0 (the default): the workers are actors of this process;
            N > 0: they run in N node processes on this machine (``workers
            // N`` each), with an embedded NATS server.
        durable: with ``processes``: the paths are jobs of a durable work
            queue on a SQLite journal, run by workers in the node processes.
        journal: with ``durable``: the journal's file (None: a temporary
            one).

    Returns:
        The totals, the five largest files, every file's SHA-256, the seconds
        the work took and (``processes`` > 0) the seconds before it, the node
        processes' start-up.

    Raises:
        ValueError: ``workers``, ``drain`` or ``capacity`` < 1, ``processes``
            < 0, ``durable`` without ``processes``, or ``path`` is not a
            directory.
        ImportError: ``processes`` > 0 without the ``remote`` extra.
        Exception: ``processes`` > 0 and the node processes' workers cannot
            start (within 60 s): the pool's error.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if processes < 0:
        raise ValueError(f"processes must be at least 0, got {processes}")
    if durable and not processes:
        raise ValueError("durable needs processes (the workers' node processes)")
    if not os.path.isdir(path):
        raise ValueError(f"not a directory: {path}")
    if durable:
        with tempfile.TemporaryDirectory() as scratch:
            from actors.persistence import SqliteJournal

            store = SqliteJournal(journal or os.path.join(scratch, "fan_out.db"))
            async with store:
                return await _run(
                    path, workers, drain, capacity, progress, skip, processes, store
                )
    return await _run(path, workers, drain, capacity, progress, skip, processes)


async def _run(
    path: str,
    workers: int,
    drain: int,
    capacity: int,
    progress: Progress | None,
    skip: frozenset[str],
    processes: int,
    journal: Journal | None = None,
) -> Summary:
    done = anyio.Event()
    remote = None
    if processes:
        # Only with --processes: the remote extra (msgspec, nats-server).
        from actors.remote import Remote

        remote = Remote(system="fan_out", node="root")
    async with ActorSystem(remote=remote) as system:
        root = system.spawn(
            Root,
            path,
            workers,
            drain,
            capacity,
            done,
            progress,
            skip,
            processes,
            journal,
            name="root",
        )
        await done.wait()
        reply: Summary | BaseException = await root.ask("summary", timeout=30.0)
    if isinstance(reply, BaseException):
        raise reply
    summary: Summary = reply
    return summary


def print_summary(
    console: Console, path: str, summary: Summary, workers: int, processes: int = 0
) -> None:
    where = f" in {processes} node processes" if processes else ""
    console.print(f"fan_out over {path} with {workers} worker actors{where}")
    table = Table()
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("files", f"{summary.files:,}")
    table.add_row("unreadable files", f"{summary.failed:,}")
    table.add_row("lines", f"{summary.lines:,}")
    table.add_row("words", f"{summary.words:,}")
    table.add_row("bytes", f"{summary.bytes:,}")
    table.add_row("worker start-up seconds", f"{summary.startup:.2f}")
    table.add_row("elapsed seconds", f"{summary.elapsed:.2f}")
    rate = summary.files / summary.elapsed if summary.elapsed else 0.0
    table.add_row("files per second", f"{rate:,.0f}")
    console.print(table)
    largest = Table(title="five largest files")
    largest.add_column("bytes", justify="right")
    largest.add_column("path")
    for size, name in summary.largest:
        largest.add_row(f"{size:,}", os.path.relpath(name, path))
    console.print(largest)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        help="directory to walk (default: the Python standard library)",
    )
    parser.add_argument("--workers", type=int, default=16, help="worker actors")
    parser.add_argument("--drain", type=int, default=64, help="items per wake")
    parser.add_argument("--capacity", type=int, default=64, help="worker mailbox")
    parser.add_argument(
        "--backend", choices=["asyncio", "uvloop", "trio"], default="asyncio"
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=0,
        help="run the workers in N node processes (0: in this process)",
    )
    parser.add_argument(
        "--durable",
        action="store_true",
        help="with --processes: the paths are jobs of a durable work queue",
    )
    parser.add_argument(
        "--journal",
        default=None,
        help="with --durable: the SQLite journal's file (default: a temporary one)",
    )
    args = parser.parse_args(argv)
    for option in ("workers", "drain", "capacity"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1")
    if args.processes < 0:
        parser.error("--processes must be at least 0")
    if args.durable and not args.processes:
        parser.error("--durable needs --processes")
    if args.journal is not None and not args.durable:
        parser.error("--journal needs --durable")
    skip: frozenset[str] = frozenset()
    if args.path is None:
        args.path, skip = sysconfig.get_paths()["stdlib"], THIRD_PARTY
    if not os.path.isdir(args.path):
        parser.error(f"not a directory: {args.path}")
    backend, options = "asyncio", {}
    if args.backend == "uvloop":
        try:
            import uvloop
        except ModuleNotFoundError:
            sys.exit('--backend uvloop: pip install "anyio-actors[uvloop]"')
        options = {"loop_factory": uvloop.new_event_loop}
    elif args.backend == "trio":
        backend = "trio"
    console = Console()
    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    with progress:
        summary = anyio.run(
            fan_out,
            args.path,
            args.workers,
            args.drain,
            args.capacity,
            progress,
            skip,
            args.processes,
            args.durable,
            args.journal,
            backend=backend,
            backend_options=options,
        )
    print_summary(console, args.path, summary, args.workers, args.processes)


if __name__ == "__main__":
    main(sys.argv[1:])
