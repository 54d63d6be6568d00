"""Count the Python calls of a sharded tell, on one node and across two.

Run in a fresh interpreter (the gate in ``test_sharding_calls.py`` does, and
so can you): ``python tests/gates/measure_sharding_calls.py BACKEND
[--breakdown N]`` prints one JSON object with the figures for ``asyncio`` or
``trio``; ``--write-budgets`` measures both and rewrites
``sharding_budgets.json`` (see ``README.md`` in this directory).

The paths (``sys.setprofile``, as ``measure_calls.py``):

* ``local.tell``: one system with ``Sharding`` of one entity type, its
  entity running; ``entity_ref.tell(i)`` in a burst, from the first tell
  until the test task wakes from an event the entity sets at the last
  message (the ``EntityRef``'s fast path, the lease guard before each
  message, the entity's loop draining 256 at a time). Deterministic: no
  I/O, no timer fires within a run (600 s leases, no passivation).
* ``remote.tell``: two nodes of one system in this process, joined through
  a private ``nats-server``, the entity type hosted on node ``b`` only (its
  role) and addressed from node ``a``: ``entity_ref.tell(i)`` one at a time,
  each awaited until the entity has set the run's event (so every message
  is a frame of its own: batching, which follows the server's timing, stays
  out). Everything this process does is in the figure: ``a``'s remote fast
  path and frame, ``b``'s read loop, the region's hop and the entity. As
  ``measure_remote_calls.py``, the figure repeats within ``TOLERANCE``
  (relative), not to the call.
* ``remote.tell.sharding``: the calls of that path made in
  ``actors/sharding/`` code (a C call counts where it was called from):
  what the sharding layer adds, exact to the call.
* ``remote.tell.wakes``: the actor loops' resumptions on that path per
  message (``run_loop``: the region's and the entity's on ``b``, the remote
  layer's own actors), exact: a hop more through an actor shows at once.

The gate holds the exact figures (``GATED``); the whole remote path
(``remote.tell.call``, ``remote.tell.c_call``) is printed beside its
reference, not gated: its event loop polls move it by a few percent from
run to run (``measure_remote_calls.py`` gates a remote round trip).

Each figure is the difference of a :data:`SMALL` and a :data:`LARGE` run
over the difference in messages, warm-up runs first, garbage collection off
while counting, Trio's scheduler reseeded, heartbeats out of the way. Beside
the figures, ``reference`` gives the same paths to the same entity actor
through its own ref (``ActorRef.tell`` on one node, ``RemoteRef.tell``
across two): the difference is what addressing by key costs. It is printed,
never gated (the other gates hold those paths).
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

# The sibling modules (a script's own directory is first on sys.path).
from gate_budgets import command_line, versions
from measure_calls import EVENTS, Counts, _counted, _difference, _figures

from actors import Actor, ActorSystem
from actors.nats import NatsServer
from actors.remote import Remote, TrustedBrokerWarning
from actors.sharding import Entity, MemoryPlacementStore, Sharding

DRAIN = 256  #: the entity's drain per wake (the runtime's default)
SMALL, LARGE = 10 * DRAIN, 30 * DRAIN  #: local tells per run: full batches
REMOTE_SMALL, REMOTE_LARGE = 100, 300  #: remote tells per run
#: Seconds: the leases, ask timeouts and heartbeats outlast any run.
NEVER = 600.0
BACKENDS = ("asyncio", "trio")
BUDGETS = Path(__file__).with_name("sharding_budgets.json")
#: How far (absolute) the two measurements of a gated figure may differ.
TOLERANCE = 0.05
_SHARDING = "actors/sharding/"
_RUN_LOOP = "actors/_dispatch.py:run_loop"
#: The figures the gate holds (exact from run to run).
GATED = (
    "local.tell.call",
    "local.tell.c_call",
    "remote.tell.sharding.call",
    "remote.tell.sharding.c_call",
    "remote.tell.wakes",
)


class Tally:
    """The entity's side of a run: counts messages, says when all arrived."""

    def __init__(self) -> None:
        self.handled = 0
        self.target = 0
        self.done: anyio.Event | None = None


TALLY = Tally()


class Sink(Actor[Any]):
    """A sync receive: counts, sets the event at the target."""

    def __init__(self, key: str) -> None:
        self.tally = TALLY

    def receive(self, message: Any) -> Any:
        tally = self.tally
        tally.handled += 1
        if tally.handled == tally.target and tally.done is not None:
            tally.done.set()
        return tally.handled


def _entity(role: str | None = None) -> Entity[Any]:
    return Entity("sink", Sink, shards=16, passivate_after=None, role=role)


def _burst(tell: Callable[[int], None], n: int) -> Callable[[], Awaitable[None]]:
    async def body() -> None:
        tally = TALLY
        tally.target = tally.handled + n
        done = tally.done = anyio.Event()
        for i in range(n):
            tell(i)
        await done.wait()

    return body


def _one_by_one(tell: Callable[[int], None], n: int) -> Callable[[], Awaitable[None]]:
    async def body() -> None:
        tally = TALLY
        for i in range(n):
            tally.target = tally.handled + 1
            done = tally.done = anyio.Event()
            tell(i)
            await done.wait()

    return body


async def _runs(
    make: Callable[[Callable[[int], None], int], Callable[[], Awaitable[None]]],
    tell: Callable[[int], None],
    small: int,
    large: int,
) -> list[Counts]:
    await _counted(make(tell, small))  # warm-up
    await _counted(make(tell, large))
    runs = []
    for _ in range(2):  # twice: the figures must repeat
        runs += [await _counted(make(tell, small)), await _counted(make(tell, large))]
    return runs


async def _local() -> dict[str, list[Counts]]:
    async with ActorSystem() as system:
        store = MemoryPlacementStore(NEVER)
        async with Sharding(system, [_entity()], store=store, node="n") as sharding:
            ref = sharding.entity_ref("sink", "k")
            await ref.ask(None, timeout=NEVER)  # running
            direct = sharding._types["sink"].active["k"].ref
            return {
                "local.tell": await _runs(_burst, ref.tell, SMALL, LARGE),
                "reference.local.tell": await _runs(_burst, direct.tell, SMALL, LARGE),
            }


async def _remote(url: str) -> dict[str, list[Counts]]:
    def node(name: str) -> Remote:
        return Remote(url, system="gate", node=name, heartbeat_interval=NEVER)

    store = MemoryPlacementStore(NEVER)
    async with (
        ActorSystem(remote=node("b")) as b,
        ActorSystem(remote=node("a")) as a,
        Sharding(
            b, [_entity("host")], store=store.connect(), node="b", roles={"host"}
        ) as host,
    ):
        with anyio.fail_after(NEVER):
            while not await store.list("regions/sink/"):
                await anyio.sleep(0.005)
        async with Sharding(a, [_entity("host")], store=store.connect(), node="a") as s:
            ref = s.entity_ref("sink", "k")
            for _ in range(3):  # running, its home found: the fast path open
                await ref.ask(None, timeout=NEVER)
            assert s._types["sink"].remote[ref.shard] is not None, "no fast path"
            assert a.remote is not None
            path = host._types["sink"].active["k"].ref.path
            direct = await a.remote.lookup("b", path)
            return {
                "remote.tell": await _runs(
                    _one_by_one, ref.tell, REMOTE_SMALL, REMOTE_LARGE
                ),
                "reference.remote.tell": await _runs(
                    _one_by_one, direct.tell, REMOTE_SMALL, REMOTE_LARGE
                ),
            }


def _sharding_share(diff: Counts, path: str, units: int) -> dict[str, float]:
    """The calls of ``diff`` made in actors/sharding/ per unit, and the actor
    loops' resumptions."""
    out = {}
    for event in EVENTS:
        ours = sum(
            v for (e, w), v in diff.items() if e == event and w.startswith(_SHARDING)
        )
        out[f"{path}.sharding.{event}"] = round(ours / units, 2)
    out[f"{path}.wakes"] = round(diff["call", _RUN_LOOP] / units, 2)
    return out


def measure(backend: str, breakdown: int = 15) -> dict[str, Any]:
    """Measure one backend; the JSON object the gate compares with budgets
    (the same shape as ``measure_calls.measure``'s, with ``reference``)."""
    warnings.simplefilter("ignore", TrustedBrokerWarning)  # a private server
    runs = anyio.run(_local, backend=backend)
    server = NatsServer()
    server.start()
    try:
        runs.update(anyio.run(_remote, server.url, backend=backend))
    finally:
        server.close()
    units = {
        "local.tell": LARGE - SMALL,
        "reference.local.tell": LARGE - SMALL,
        "remote.tell": REMOTE_LARGE - REMOTE_SMALL,
        "reference.remote.tell": REMOTE_LARGE - REMOTE_SMALL,
    }
    out: dict[str, Any] = {"backend": backend, "figures": {}, "repeat": {}}
    out["reference"] = {}
    out["breakdown"] = {}
    for path, counts in runs.items():
        first = _difference(counts[0], counts[1])
        again = _difference(counts[2], counts[3])
        n = units[path]
        if path.startswith("reference."):
            name = path[len("reference.") :]
            out["reference"].update(_figures(first, name, n))
            if name == "remote.tell":
                out["reference"].update(_sharding_share(first, name, n))
            continue
        out["figures"].update(_figures(first, path, n))
        out["repeat"].update(_figures(again, path, n))
        if path == "remote.tell":
            out["figures"].update(_sharding_share(first, path, n))
            out["repeat"].update(_sharding_share(again, path, n))
        top = sorted(first.items(), key=lambda kv: -abs(kv[1]))[:breakdown]
        out["breakdown"][path] = [
            f"{v / n:8.3f}  {event:6}  {where}" for (event, where), v in top
        ]

    # The gated figures repeat (the whole remote path is only printed).
    out["repeatable"] = all(
        abs(out["figures"][key] - out["repeat"][key]) <= TOLERANCE for key in GATED
    )
    out["versions"] = versions()
    return out


if __name__ == "__main__":
    command_line(__doc__, BACKENDS, measure, BUDGETS, "counts")
