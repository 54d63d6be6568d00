"""The ``scale`` rows: work spread over node processes on this machine.

Two node processes (``python -m actors.node``) are started at the first
sample (untimed, reused by every sample, killed at exit) on this process's
``nats-server``. These rows time **wall-clock** time whatever ``--clock``
says (``time.perf_counter``): the work happens in other processes, whose CPU
time the process clock does not see.

* ``scale/fan_out``: the main job's work (``examples/fan_out.py``: read,
  count lines and words, SHA-256) on every file of the Python standard
  library (the first 100 with ``--quick``), as ``examples/fan_out.py`` does
  it: 16 worker actors in this process reading in worker threads
  (``in-process``), or a pool across processes with 8 workers per node
  (16 credits each) reading on the node's loop on one node process
  (``processes/1``) or two (``processes/2``, the subject). Unit: one file.
* ``scale/tiny``: ``count`` tiny tells (an int each) to one worker:
  in this process (``in-process``), or to a pool on one node process with 64
  credits per worker (``batched``, the subject: jobs and reports travel in
  batches) or 1 (``unbatched``: one job per round trip). Unit: one message.
* ``scale/uneven``: ``count`` jobs over two node processes, one handler 5x
  slower than the other (4 ms and 20 ms, blocking): the pool's credits
  (``credits``, the subject: idle workers pull, 2 credits per worker)
  against telling two remote workers in turn (``round-robin``, as an even
  spread such as a NATS queue group's). Unit: one job.
"""

from __future__ import annotations

import atexit
import itertools
import os
import sys
import sysconfig
import time
from typing import Any

import anyio

from actors import ActorSystem
from actors.nats._protocol import new_nuid
from actors.remote import Remote, RemotePoolRef
from actors.remote.scaleout import Handoff, NodeProcesses

from .._registry import Impl, Row, Sample, register
from ._scale_workers import Analyzer, Counter, InlineAnalyzer, Tiny, Uneven
from ._systems import missing, nats_url

__all__: list[str] = []

QUICK_FILES = 100
TINY, QUICK_TINY = 5_000, 500
UNEVEN, QUICK_UNEVEN = 300, 30
#: Seconds per job on the two nodes of scale/uneven.
FAST, SLOW = 0.004, 0.020
GUARD = 120.0  #: seconds before a sample gives up (a row failure, not a hang)
SYSTEM = "scale" + new_nuid(6)
NODES = ("scale-0", "scale-1")

_processes: NodeProcesses | None = None
_names = itertools.count()


def _url() -> str:
    """This process's server, with the node processes of the rows (started
    at the first call)."""
    global _processes
    url = nats_url()
    if _processes is None:
        _processes = NodeProcesses(
            Handoff((url,)),
            system=SYSTEM,
            prefix="actors",
            names=NODES,
            modules=["benchmarks.rows._scale_workers"],
        )
        atexit.register(_processes.kill)
    return url


def _remote() -> Remote:
    return Remote(_url(), system=SYSTEM, node=f"bench-{next(_names)}")


def _all_files() -> list[str]:
    """Every file of the standard library, as the main job walks it
    (``examples/fan_out.py``: sorted, no links, no site-packages)."""
    found: list[str] = []
    skip = {"site-packages", "dist-packages"}
    for directory, subdirs, files in os.walk(sysconfig.get_paths()["stdlib"]):
        subdirs[:] = sorted(d for d in subdirs if d not in skip)
        for name in sorted(files):
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append(path)
    return found


def _files(count: int) -> list[str]:
    return _all_files()[:count]


#: Every file of the standard library per sample (the main job's work).
FILES = len(_all_files())


async def _pool(
    system: ActorSystem,
    factory: Any,
    *args: Any,
    nodes: tuple[str, ...],
    **options: Any,
) -> RemotePoolRef[Any]:
    pool: RemotePoolRef[Any] = system.remote.spawn_pool(
        factory, *args, nodes=nodes, **options
    )
    await pool.wait_ready(timeout=60)
    return pool


# -- scale/fan_out -------------------------------------------------------------


async def fan_out_local(count: int) -> Sample:
    files = _files(count)
    done = anyio.Event()
    async with ActorSystem() as system:
        tally = [0]
        counter = system.spawn(Counter, len(files), done, tally)
        workers = [system.spawn(Analyzer, counter, capacity=64) for _ in range(16)]
        start = time.perf_counter()
        for index, path in enumerate(files):
            await workers[index % 16].send(path)
        with anyio.move_on_after(GUARD):
            await done.wait()
        elapsed = time.perf_counter() - start
        received = tally[0]
    return Sample(elapsed, received)


def _fan_out_across(processes: int) -> Any:
    async def sample(count: int) -> Sample:
        files = _files(count)
        done = anyio.Event()
        async with ActorSystem(remote=_remote()) as system:
            tally = [0]
            counter = system.spawn(Counter, len(files), done, tally)
            pool = await _pool(
                system,
                InlineAnalyzer,
                counter,
                nodes=NODES[:processes],
                workers=8,
                prefetch=16,  # as examples/fan_out.py: a deep window per node
                capacity=64,
            )
            start = time.perf_counter()
            for path in files:
                await pool.send(path)
            with anyio.move_on_after(GUARD):
                await done.wait()
            elapsed = time.perf_counter() - start
            received = tally[0]
            pool.stop()
        return Sample(elapsed, received)

    return sample


# -- scale/tiny -----------------------------------------------------------------


async def tiny_local(count: int) -> Sample:
    async with ActorSystem() as system:
        worker = system.spawn(Tiny)
        start = time.perf_counter()
        for index in range(count):
            worker.tell(index)
        received = await worker.ask("sync", timeout=GUARD) - 1
        elapsed = time.perf_counter() - start
    return Sample(elapsed, received)


def _tiny_across(prefetch: int) -> Any:
    async def sample(count: int) -> Sample:
        async with ActorSystem(remote=_remote()) as system:
            pool = await _pool(system, Tiny, nodes=NODES[:1], prefetch=prefetch)
            start = time.perf_counter()
            for index in range(count):
                pool.tell(index)
            with anyio.move_on_after(GUARD):
                await pool.wait_idle()
            elapsed = time.perf_counter() - start
            received = count - pool.queued - sum(pool.in_flight.values())
            pool.stop()
        return Sample(elapsed, received)

    return sample


# -- scale/uneven ---------------------------------------------------------------

DELAYS = {NODES[0]: FAST, NODES[1]: SLOW}


async def uneven_credits(count: int) -> Sample:
    async with ActorSystem(remote=_remote()) as system:
        pool = await _pool(system, Uneven, DELAYS, nodes=NODES, prefetch=2)
        start = time.perf_counter()
        for index in range(count):
            pool.tell(index)
        with anyio.move_on_after(GUARD):
            await pool.wait_idle()
        elapsed = time.perf_counter() - start
        received = count - pool.queued - sum(pool.in_flight.values())
        pool.stop()
    return Sample(elapsed, received)


async def uneven_round_robin(count: int) -> Sample:
    async with ActorSystem(remote=_remote()) as system:
        workers = [await system.remote.spawn(node, Uneven, DELAYS) for node in NODES]
        start = time.perf_counter()
        for index in range(count):
            await workers[index % 2].send(index)
        for worker in workers:
            await worker.ask("sync", timeout=GUARD)
        elapsed = time.perf_counter() - start
        for worker in workers:
            worker.stop()
    return Sample(elapsed, count)


_why = missing()
if _why is not None:
    print(f"benchmarks: scale rows skipped: {_why}", file=sys.stderr)
else:
    register(
        Row(
            "scale/fan_out",
            "the main job's work (read, count, SHA-256) on stdlib files: 16 "
            "workers in-process vs a pool on 1 or 2 node processes (wall time)",
            FILES,
            QUICK_FILES,
            (
                Impl("processes/2", _fan_out_across(2)),
                Impl("processes/1", _fan_out_across(1)),
                Impl("in-process", fan_out_local),
            ),
            unit="file",
            subject="processes/2",
        )
    )
    register(
        Row(
            "scale/tiny",
            "tiny tells to a pool on a node process, 64 credits per worker "
            "(batched) or 1 (unbatched), vs one local worker (wall time)",
            TINY,
            QUICK_TINY,
            (
                Impl("batched", _tiny_across(64)),
                Impl("unbatched", _tiny_across(1)),
                Impl("in-process", tiny_local),
            ),
            unit="message",
            subject="batched",
        )
    )
    register(
        Row(
            "scale/uneven",
            "jobs over two node processes, one 5x slower: pool credits vs "
            "round-robin tells (wall time)",
            UNEVEN,
            QUICK_UNEVEN,
            (
                Impl("credits", uneven_credits),
                Impl("round-robin", uneven_round_robin),
            ),
            unit="job",
            subject="credits",
        )
    )


async def fairness(jobs: int = UNEVEN, prefetch: int = 1) -> dict[str, int]:
    """Jobs each node of scale/uneven handled through the pool's credits
    (``python -m benchmarks.rows.scale`` prints them)."""
    async with ActorSystem(remote=_remote()) as system:
        pool = await _pool(system, Uneven, DELAYS, nodes=NODES, prefetch=prefetch)
        for index in range(jobs):
            pool.tell(index)
        await pool.wait_idle()
        pool.stop()
        split = {
            ("fast" if n == NODES[0] else "slow"): c for n, c in pool.handled.items()
        }
    return split


if __name__ == "__main__":
    for _prefetch in (1, 2, 4):
        _split = anyio.run(fairness, UNEVEN, _prefetch)
        _ratio = _split["fast"] / _split["slow"]
        print(f"prefetch {_prefetch}: {_split}, fast/slow {_ratio:.2f}")
