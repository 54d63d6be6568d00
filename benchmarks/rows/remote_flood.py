"""The slow-actor flood: one sender ``await ref.send(i)``\\ s to a remote actor
that takes 1 ms per message, for a fixed time, and what that does to the
receiving node: its RSS growth, its backlog, and whether the sender waited.

``python -m benchmarks.rows.remote_flood [--seconds 10] [--size 256] [--work
sleep|block] [--backend B ...]`` prints one line per backend. The receiver
is a process of its own (``_flood_receiver``), on this process's
``nats-server``; its RSS is read from ``/proc/<pid>/status`` (VmRSS) before
the flood, every 0.25 s during it (the peak) and at the end. A send *waited*
when it took over 1 ms (the actor's time per message: with backpressure the
sender runs at the actor's pace). The receiver is killed at the end (leaving
with a backlog would take as long as the backlog).

Also a row, ``remote/flood/slow`` (registered by
``benchmarks.rows.remote``): ``count`` sends to that actor (blocking work),
timed until the actor handled them all (wall clock: the work is in another
process), beside the same actor in this process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any, NamedTuple

import anyio
import sniffio

from actors import ActorSystem
from actors.nats._protocol import new_nuid
from actors.remote import Remote
from actors.remote._credits import DEFAULT_SHARE

from .._registry import Sample
from ._flood_receiver import Handled, Slow
from ._systems import nats_url

__all__ = ["FloodFigures", "flood", "in_process_slow", "main", "ours_slow"]

GUARD = 60.0  #: seconds before giving up on the receiver
RECEIVER = "benchmarks.rows._flood_receiver"  #: the receiver's module


class FloodFigures(NamedTuple):
    """What one flood measured."""

    seconds: float  #: how long the sender sent
    sent: int  #: sends that returned
    waited: int  #: of them, sends that took over 1 ms
    waiting: float  #: seconds spent in those
    handled: int  #: messages the actor had handled at the end
    backlog: int  #: sent and not handled at the end
    queued: int  #: in the actor's mailbox at the end
    rss_before: int  #: the receiver's RSS before the flood, bytes
    rss_peak: int  #: its highest RSS sampled during the flood, bytes
    rss_after: int  #: its RSS at the end, bytes


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class Receiver:
    """The receiving node's process (see ``_flood_receiver``)."""

    def __init__(
        self, url: str, system: str, backend: str, work: str = "sleep"
    ) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", RECEIVER, url, system, backend, work],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            self.close()
            raise RuntimeError(f"the receiver did not start: {line!r}")

    @property
    def rss(self) -> int:
        return _rss(self.process.pid)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


async def _refs(a: ActorSystem) -> tuple[Any, Any]:
    with anyio.fail_after(GUARD):
        return (
            await a.remote.lookup("receiver", "/user/slow"),
            await a.remote.lookup("receiver", "/user/probe"),
        )


async def flood(
    url: str, seconds: float, backend: str, size: int = 256, work: str = "sleep"
) -> FloodFigures:
    """Flood a 1 ms actor (``work``: see ``_flood_receiver``) in a receiver
    process for ``seconds`` with ``size``-byte messages."""
    system = "flood" + new_nuid(8)
    receiver = await anyio.to_thread.run_sync(Receiver, url, system, backend, work)
    try:
        async with ActorSystem(
            remote=Remote(url, system=system, node="sender", stop_timeout=0.5)
        ) as a:
            slow, probe = await _refs(a)
            await slow.send(b"")  # the peer's buffer, writer and lane exist
            rss_before = peak = receiver.rss
            sent = waited = 0
            waiting = 0.0
            stop = time.perf_counter() + seconds

            async def sample() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, receiver.rss)
                    await anyio.sleep(0.25)

            async with anyio.create_task_group() as tg:
                tg.start_soon(sample)
                send = slow.send
                clock = time.perf_counter
                payload = b"x" * size
                start = clock()
                while (now := clock()) < stop:
                    await send(payload)
                    took = clock() - now
                    if took > 0.001:
                        waited += 1
                        waiting += took
                    sent += 1
                    if not sent % 256:
                        await anyio.lowlevel.checkpoint()  # the sampler runs
                elapsed = clock() - start
                tg.cancel_scope.cancel()
            with anyio.fail_after(GUARD):
                handled, queued = await probe.ask("stats", timeout=GUARD)
            rss_after = receiver.rss
            peak = max(peak, rss_after)
    finally:
        await anyio.to_thread.run_sync(receiver.close)
    return FloodFigures(
        elapsed,
        sent,
        waited,
        waiting,
        handled - 1,
        sent + 1 - handled,
        queued,
        rss_before,
        peak,
        rss_after,
    )


async def _handled(probe: Any, count: int) -> None:
    with anyio.fail_after(GUARD + count * 0.01):
        while (await probe.ask("stats", timeout=GUARD))[0] < count:
            await anyio.sleep(0.01)


async def ours_slow(url: str, count: int) -> Sample:
    """The ``remote/flood/slow`` row's subject: ``count`` sends to the 1 ms
    actor of a receiver process, until it has handled them (wall time)."""
    system = "flood" + new_nuid(8)
    receiver = await anyio.to_thread.run_sync(
        Receiver, url, system, _backend(), "block"
    )
    try:
        async with ActorSystem(
            remote=Remote(url, system=system, node="sender", stop_timeout=0.5)
        ) as a:
            slow, probe = await _refs(a)
            start = time.perf_counter()
            for i in range(count):
                await slow.send(i)
            await _handled(probe, count)
            elapsed = time.perf_counter() - start
            handled, _ = await probe.ask("stats", timeout=GUARD)
    finally:
        await anyio.to_thread.run_sync(receiver.close)
    return Sample(elapsed, handled)


async def in_process_slow(count: int) -> Sample:
    """Its baseline: the same sends to the same actor in this process, its
    mailbox bounded by the default share (wall time)."""
    handled = Handled()
    async with ActorSystem() as system:
        slow = system.spawn(Slow, handled, capacity=DEFAULT_SHARE)
        start = time.perf_counter()
        for i in range(count):
            await slow.send(i)
        with anyio.fail_after(GUARD + count * 0.01):
            while handled.count < count:
                await anyio.sleep(0.01)
        elapsed = time.perf_counter() - start
    return Sample(elapsed, handled.count)


def _backend() -> str:
    # The receiver runs on the sample's event loop too.
    name = sniffio.current_async_library()
    if name == "asyncio":
        import asyncio

        loop = type(asyncio.get_running_loop()).__module__
        return "uvloop" if loop.startswith("uvloop") else "asyncio"
    return name


def _format(backend: str, f: FloodFigures) -> str:
    mb = 1024 * 1024
    return (
        f"| {backend} | {f.seconds:.1f} | {f.sent:,} | {f.waited:,} "
        f"({f.waiting:.1f} s) | {f.handled:,} | {f.backlog:,} | {f.queued:,} | "
        f"{f.rss_before / mb:.0f} | {f.rss_peak / mb:.0f} | "
        f"{(f.rss_peak - f.rss_before) / mb:+.0f} |"
    )


def main(argv: list[str] | None = None) -> None:
    """The command line (see the module doc)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rows.remote_flood")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=256, help="payload bytes")
    parser.add_argument(
        "--work",
        choices=("sleep", "block"),
        default="sleep",
        help="the actor awaits anyio.sleep(0.001) or blocks in time.sleep(0.001)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        choices=("asyncio", "uvloop", "trio"),
        help="repeatable; default: asyncio and trio",
    )
    args = parser.parse_args(argv)
    url = nats_url()
    print(
        "| backend | seconds | sends | sends that waited | handled | backlog "
        "| queued | RSS before (MB) | RSS peak (MB) | growth (MB) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for backend in args.backend or ["asyncio", "trio"]:
        options: dict[str, Any] = {}
        name = backend
        if backend == "uvloop":
            import uvloop

            backend, options = "asyncio", {"loop_factory": uvloop.new_event_loop}
        figures = anyio.run(
            flood,
            url,
            args.seconds,
            name,
            args.size,
            args.work,
            backend=backend,
            backend_options=options,
        )
        print(_format(name, figures), flush=True)


if __name__ == "__main__":
    main()
