"""The randomized fault campaign: one seeded run of random operations against a
random actor tree, then the ledger's invariant (see ``_ledger.py``).

A run (:func:`run_seed`) builds, from ``random.Random(seed)``:

* a tree: top-level actors with small mailboxes (sync and async handlers,
  timers, restart types), supervisors under random strategies (one-for-one,
  one-for-all, rest-for-one; random deciders mapping fault kinds to restart,
  resume, stop, escalate; random intensity and backoff) with children and
  child pools, top-level pools (``round_robin`` and ``shared_queue``);
* client tasks that run random operations: ``tell``, ``send``, ``ask`` (short
  timeouts), each optionally inside a cancel scope (deadline already past, a
  scope cancelled by another task after a random number of checkpoints, a tiny
  real deadline), native ``Task.cancel()`` of a sender (asyncio and uvloop),
  broadcasts, stops, fresh spawns, and ``system.from_thread`` calls from a
  worker thread;
* the newer features: handlers that stash a message (unstashed a few
  messages later, or dead letters when the actor stops), that switch
  behaviour (``become``/``unbecome``), answer an ask with ``ErrorReply``,
  pipe background work to themselves (``context.run`` with and without
  ``then``) or ask another actor without waiting (``context.ask``);
  ping-pong rallies between two actors (``tell`` from handlers: the
  checkpoint-then-take path); names registered and looked up
  (``register``/``whereis``); some runs ending with ``system.stop()``
  (from the loop or from a thread) instead of leaving the block;
* messages of four shapes: an object holding the id, a ``("m", id)`` tuple, a
  bare int id, and a bare ``None`` (booked in aggregate); some ids are planned
  to fail (with a fault kind the supervisor's decider maps) or to stop their
  actor;
* the rules of issue 22: a ``tell`` (or a broadcast) never raises
  ``ActorStopped`` (a tell to a stopped actor is a dead letter, checked per
  id when the target was stopped at the call); a third of the runs keep the
  default guardian strategy, whose intensity counts per top-level actor: the
  planned faults per top-level subtree are budgeted (at most 3, now and then
  more), and the system may fail only by a subtree over that budget.

Then the system exits (sometimes with the clients still running, sometimes
with a ``shutdown_timeout``), and the run checks every id. A run that does not
end within its time bound is a hang.

``features`` switch parts off (see :data:`FEATURES`), so the campaign can run
green on what already holds while known bugs are being fixed. The seed decides
the operations; timing (ask timeouts, timers, threads) is real, so a failing
seed reproduces the same operations but not always the same interleaving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

from actors import (
    Actor,
    ActorStopped,
    ActorSystem,
    AskTimeout,
    Backoff,
    Directive,
    ErrorReply,
    MailboxFull,
    OneForAll,
    OneForOne,
    PoolRef,
    ReceiveTimeout,
    RestForOne,
    Result,
    StrayCancellation,
    SupervisorStrategy,
    SystemNotRunning,
)

from ._ledger import (
    ABANDONED,
    ACCEPTED,
    ASK_ERROR_REPLY,
    ASK_FAILED,
    ASK_OK,
    ASK_STOPPED,
    ASK_STOPPED_QUEUED,
    CANCELLED,
    CTX_DONE,
    INFLIGHT,
    PIPE_WORK,
    REJECTED,
    UNCERTAIN,
    Cast,
    CtxDone,
    Ledger,
    Msg,
    Pipe,
    Tick,
    Volley,
    check,
    key_of,
)

__all__ = ["BACKENDS", "FEATURES", "RunResult", "run_seed", "tap_dead_letters"]

#: Every switch, on by default. Known-bug classes hide behind some of them.
FEATURES: dict[str, bool] = {
    # Message shapes.
    "none_messages": True,  # bare None messages
    # Operations.
    "tell": True,
    "send": True,
    "ask": True,
    "cancel_scopes": True,  # send/ask inside cancel scopes
    "native_cancel": True,  # Task.cancel() of a waiting send (asyncio, uvloop)
    "native_ask": True,  # Task.cancel() of an asker (asyncio, uvloop)
    "stops": True,  # ref.stop() of random actors and pools, fresh spawns
    "threads": True,  # system.from_thread tell/send from a worker thread
    "thread_asks": True,  # system.from_thread.ask (short timeouts)
    # Faults.
    "failures": True,  # handlers that raise / stop their actor
    "group_strategies": True,  # one-for-all and rest-for-one supervisors
    "escalation": True,  # deciders that escalate, small restart intensities
    # Pools.
    "round_robin": True,
    "shared_queue": True,
    "broadcast": True,
    "nested_pools": True,  # pools as children of supervisors
    # A supervisor of a pool may resume the pool after it escalated.
    "resume_escalated_pool": True,
    # Timers and teardown.
    "timers": True,
    "shutdown_timeout": True,  # some runs leave with a shutdown_timeout
    "abrupt_exit": True,  # some runs leave with clients still running
    # Some runs leave with a shutdown_timeout while some on_stop never returns.
    "stuck_on_stop": True,
    # Some async handlers await a future another task cancelled (asyncio).
    "stray_cancel": True,
    # The newer features.
    "stash": True,  # handlers stash messages; unstash_all a few messages later
    "become": True,  # handlers switch behaviour (become / unbecome)
    "error_reply": True,  # handlers answer with ErrorReply(exc)
    "pipe": True,  # context.run work piped back (with and without then)
    "context_ask": True,  # context.ask with a reply adapter (then)
    "ping_pong": True,  # rallies of tells between two actors' handlers
    "registry": True,  # register / whereis / tell by name
    "system_stop": True,  # some runs end with system.stop()
    "receive_timeout": True,  # some actors set a receive timeout (stash it too)
    "stash_timers": True,  # some single timer firings are stashed once
    # ErrorReply answers to system.from_thread.ask (some given up on).
    "thread_error_replies": True,
    # Some runs keep the default guardian strategy, whose restart intensity
    # counts per top-level actor: each top-level subtree gets a budget of
    # planned faults (3 at most: the system must not fail; now and then one
    # gets more: a shutdown by that subtree's failure is allowed).
    "default_guardian": True,
}

#: The default guardian's intensity: restarts allowed per top-level actor.
GUARDIAN_RESTARTS = 3

BACKENDS: dict[str, tuple[str, dict[str, Any]]] = {
    "asyncio": ("asyncio", {}),
    "uvloop": ("asyncio", {"use_uvloop": True}),
    "trio": ("trio", {}),
}

FAULT_KINDS = ("resume", "restart", "stop", "escalate")


class Fault(Exception):
    """A planned handler failure; ``kind`` is what deciders look at."""

    def __init__(self, kind: str, key: object) -> None:
        super().__init__(kind, key)
        self.kind = kind
        self.key = key


class Replied(Exception):
    """What a handler answers with ``ErrorReply`` (the asker raises it)."""

    def __init__(self, key: object) -> None:
        super().__init__(key)
        self.key = key




def tap_dead_letters(system: ActorSystem) -> Callable[[], list[Any]]:
    """Start collecting every dead letter of ``system``; returns a function
    that gives them all (call it after the system has exited).

    With ``system.dead_letters.subscribe(callback)`` (when the runtime has
    it) every letter is collected as it happens; otherwise the system must
    keep them all (``dead_letters_kept``), which is checked.
    """
    letters = system.dead_letters
    subscribe = getattr(letters, "subscribe", None)
    if subscribe is not None:
        seen: list[Any] = []
        subscribe(seen.append)

        def collected() -> list[Any]:
            if len(seen) != letters.count:
                raise AssertionError(
                    f"subscription saw {len(seen)} dead letters, count is "
                    f"{letters.count}"
                )
            return seen

        return collected

    def kept() -> list[Any]:
        recent = list(letters.recent)
        if len(recent) != letters.count:
            raise AssertionError(
                f"{letters.count} dead letters but {len(recent)} kept: raise "
                "dead_letters_kept"
            )
        return recent

    return kept


# -- the actors ---------------------------------------------------------------


@dataclass
class Spec:
    """How to build one actor (or pool) of the tree."""

    name: str
    is_async: bool = False
    capacity: int | None = None
    restart: str = "transient"
    timers: bool = False
    none_fail_every: int = 0  # fail on every n-th None (0: never)
    strategy: SupervisorStrategy | None = None
    children: list[Spec] = field(default_factory=list)
    pool: str | None = None  # routing: this spec is a pool of workers
    size: int = 0
    drain: int | None = None
    in_pool: bool = False  # a worker: never stops itself
    tick: float = 0.001  # seconds between periodic timer firings
    stubborn: bool = False  # on_stop never returns once the system is exiting
    unstash_every: int = 1  # unstash_all after every n-th message handled
    receive_timeout: float | None = None  # seconds (set in on_start)


class World:
    """What the actors share with the clients: the ledger and the live refs."""

    def __init__(self, ledger: Ledger, rng: random.Random) -> None:
        self.ledger = ledger
        self.rng = rng
        self.targets: dict[str, Any] = {}  # path -> ActorRef | PoolRef
        self.pools: dict[str, PoolRef[Any]] = {}
        self.exiting = False  # the run is leaving the system
        self.stash_timers = False  # stash some single timer firings once
        # The default guardian's runs: planned faults left per top-level
        # subtree (None: unbounded, the guardian's strategy is given), and
        # the subtrees allowed past the guardian's intensity.
        self.budgets: dict[str, int] | None = None
        self.over: set[str] = set()

    def may_fault(self, path: str, cost: int = 1) -> bool:
        """Whether a fault may be planned for a message to ``path`` (it then
        counts against its top-level subtree's budget)."""
        budgets = self.budgets
        if budgets is None:
            return True
        top = subtree_of(path)
        left = budgets.get(top)
        if left is None:
            if self.rng.random() < 0.1:
                left = GUARDIAN_RESTARTS + 3  # may shut the system down
                self.over.add(top)
            else:
                left = self.rng.choice((0, 1, 2, 3, 3))
        if left < cost:
            budgets[top] = left
            return False
        budgets[top] = left - cost
        return True

    def book(self, i: int | None, outcome: str, reply: object = None) -> None:
        if i is None:
            self.ledger.none_outcomes[outcome] += 1
            return
        self.ledger.outcome[i] = outcome
        if outcome == ASK_OK:
            self.ledger.replies[i] = reply

    def spawn_children(self, actor: Node) -> None:
        context = actor.context
        for spec in actor.spec.children:
            if spec.pool is not None:
                pool = context.spawn_pool(
                    node_class(spec),
                    spec.size,
                    self,
                    spec,
                    routing=spec.pool,  # type: ignore[arg-type]
                    name=spec.name,
                    capacity=spec.capacity,
                    drain=spec.drain,
                )
                self.targets[pool.path] = pool
                self.pools[pool.path] = pool
            else:
                ref = context.spawn(
                    node_class(spec),
                    self,
                    spec,
                    name=spec.name,
                    capacity=spec.capacity,
                    restart=spec.restart,  # type: ignore[arg-type]
                )
                self.targets[ref.path] = ref


def subtree_of(label: str) -> str:
    """The top-level actor's path of a path (or a ledger target label,
    ``"/user/p3 (round_robin pool)"``): ``"/user/p3"``."""
    parts = label.split(" ")[0].split("/")
    return "/".join(parts[:3])


class Node(Actor):
    """Every actor of the tree: handles the campaign's messages, may supervise
    children, may run timers."""

    def __init__(self, world: World, spec: Spec) -> None:
        self.world = world
        self.spec = spec
        self.nones = 0
        self.singles = 0
        self.count = 0  # messages handled by this instance
        self.flipped = False  # become(other) in effect
        if spec.strategy is not None:
            self.supervisor_strategy = spec.strategy

    def on_start(self) -> None:
        spec = self.spec
        if spec.timers:
            timers = self.context.timers
            timers.start_periodic("tick", Tick(None), spec.tick)
            self._single()
        if spec.children:
            self.world.spawn_children(self)
        if spec.receive_timeout is not None:
            self.context.set_receive_timeout(spec.receive_timeout)
        self.timeouts = 0

    def _single(self) -> None:
        if self.singles < 20:
            self.singles += 1
            token = self.world.ledger.new_timer_token()
            self.context.timers.start_single("once", Tick(token), 0.001)

    def handle(self, message: object) -> object:
        ledger = self.world.ledger
        key = key_of(message)
        if key == "none":
            self.nones += 1
            every = self.spec.none_fail_every
            if every and self.nones % every == 0:
                raise Fault("restart", None)
            ledger.none_handled += 1
            return "none"
        if type(key) is tuple:  # a broadcast: booked per worker
            key = (key[0], key[1], self.context.path)
            plan = ledger.plans.get(key[1])
        elif type(message) is CtxDone:
            return None  # a context.ask reply, booked by the adapter
        elif key is None:
            if type(message) is Tick:
                token = message.token
                if token is not None:
                    if (
                        self.world.stash_timers
                        and token % 5 == 0
                        and ("tick", token) not in ledger.stashed
                    ):
                        ledger.stashed.add(("tick", token))
                        self.stash()
                        return None
                    ledger.timers_handled[token] += 1
                    self._single()
                return None
            if type(message) is ReceiveTimeout:
                ledger.ops["receive timeouts"] += 1
                self.timeouts += 1
                if self.timeouts % 3 == 0:
                    self.stash()  # a dead letter on stop, or handled later
                elif self.timeouts % 4 == 0:
                    self.unstash_all()
                return None
            raise AssertionError(f"unexpected message {message!r}")
        else:
            plan = ledger.plans.get(key)
        self.count += 1
        if plan is not None:
            if plan == "stop":
                if not self.spec.in_pool:
                    self.context.stop()
            elif plan == "stash":
                if key not in ledger.stashed:
                    ledger.stashed.add(key)
                    self.stash()
                    return None
            elif plan in _EXTRAS:
                ledger.handled[key] += 1
                return _EXTRAS[plan](self, key)
            elif plan != "stray":  # (only async handlers can await one)
                raise Fault(plan, key)
        elif self.count % self.spec.unstash_every == 0:
            self.unstash_all()
        ledger.handled[key] += 1
        if type(message) is Volley:
            self._volley(message)
        return key

    def other(self, message: object) -> object:
        """The behaviour ``become`` switches to: the same books."""
        self.world.ledger.ops["handled by become"] += 1
        return self.handle(message)

    # -- what a plan may ask for besides a failure -----------------------------

    def _become(self, key: object) -> object:
        if self.flipped:
            self.unbecome()
        else:
            self.become(self.other, discard_old=False)
        self.flipped = not self.flipped
        return key

    def _error_reply(self, key: object) -> object:
        return ErrorReply(Replied(key))

    def _pipe(self, key: object) -> object:
        ledger = self.world.ledger
        j = ledger.new_id("piped", self.context.path)
        ledger.outcome[j] = PIPE_WORK
        if j % 4 == 0:
            ledger.plans[j] = "stash"  # a stashed piped result keeps its message

        async def work() -> Pipe:
            await anyio.lowlevel.checkpoint()
            ledger.outcome[j] = ACCEPTED  # returned: handled once or a dead letter
            return Pipe(j)

        shape = j % 3
        then: Callable[[Result[Any]], object] | None = (
            None
            if shape == 0
            else (lambda r: r.value)
            if shape == 1
            else (lambda r: ("m", r.value.id))
        )
        try:
            self.context.run(work if j % 2 else work(), then=then)
        except ActorStopped:
            ledger.outcome[j] = REJECTED
        return key

    def _context_ask(self, key: object) -> object:
        ledger = self.world.ledger
        targets = [t for t in self.world.targets.values() if t.is_alive]
        if not targets:
            return key
        target = targets[int(key) % len(targets)]  # type: ignore[call-overload]
        k = ledger.new_id("context ask", target.path)
        if k % 7 == 0 and self.world.may_fault(target.path):
            ledger.plans[k] = "restart"
        elif k % 7 == 1:
            ledger.plans[k] = "error_reply"
        book = self.world.book

        def adapter(result: Result[Any]) -> object:
            ledger.ctx_replies[k] += 1
            if result.ok:
                book(k, ASK_OK, result.value)
            else:
                book_ask_error(book, k, result.error)
            return CTX_DONE

        try:
            self.context.ask(target, Msg(k), (0.002, 0.05, 0.5)[k % 3], then=adapter)
        except ActorStopped:
            ledger.outcome[k] = ASK_STOPPED
        else:
            ledger.ctx_asks += 1
        return key

    def _volley(self, message: Volley) -> None:
        if message.hops <= 0:
            return
        ledger = self.world.ledger
        back = message.back
        j = ledger.new_id("volley", back.path)
        if j % 9 == 0:
            ledger.plans[j] = "stash"
        try:
            back.tell(Volley(j, message.hops - 1, self.context.self_ref))
        except MailboxFull:
            ledger.outcome[j] = REJECTED
        except ActorStopped as exc:  # a tell to a stopped actor: a dead letter
            ledger.outcome[j] = f"tell raised {exc!r}"
        else:
            ledger.outcome[j] = ACCEPTED

    def receive(self, message: object) -> object:
        return self.handle(message)


class AsyncNode(Node):
    """A Node whose handler is ``async def`` and yields before handling."""

    async def other(self, message: object) -> object:  # type: ignore[override]
        self.world.ledger.ops["handled by become"] += 1
        return await self.receive(message)

    async def receive(self, message: object) -> object:
        await anyio.lowlevel.checkpoint()
        key = key_of(message)
        if type(key) is int and self.world.ledger.plans.get(key) == "stray":
            # A future some other task cancelled: its CancelledError is not a
            # cancellation of this actor (asyncio only; see Run.message).
            future = asyncio.get_running_loop().create_future()
            future.cancel()
            await future
        return self.handle(message)

    async def on_stop(self) -> None:
        await anyio.lowlevel.checkpoint()
        if self.spec.stubborn and self.world.exiting:
            await anyio.sleep_forever()


_EXTRAS: dict[str, Callable[[Node, Any], object]] = {
    "become": Node._become,
    "error_reply": Node._error_reply,
    "pipe": Node._pipe,
    "context_ask": Node._context_ask,
}

#: Plans that only a feature switch allows, and how often (per message).
EXTRA_PLANS = (
    ("stash", 0.03),
    ("become", 0.01),
    ("error_reply", 0.01),
    ("pipe", 0.015),
    ("context_ask", 0.01),
)


def book_ask_error(
    book: Callable[..., None], i: int | None, error: BaseException | None
) -> None:
    """Book an ask that raised ``error`` (what each exception means)."""
    if isinstance(error, Replied):
        book(i, ASK_ERROR_REPLY)
    elif isinstance(error, Fault):
        book(i, ASK_FAILED)
    elif isinstance(error, AskTimeout):
        book(i, ABANDONED)
    elif isinstance(error, ActorStopped):
        queued = "before replying" in str(error)
        book(i, ASK_STOPPED_QUEUED if queued else ASK_STOPPED)
    else:
        book(i, f"unexpected {error!r}")


def node_class(spec: Spec) -> type[Node]:
    return AsyncNode if spec.is_async else Node


# -- building a tree ----------------------------------------------------------------


class Builder:
    def __init__(
        self,
        rng: random.Random,
        features: Mapping[str, bool],
        default_guardian: bool = False,
    ) -> None:
        self.rng = rng
        self.f = features
        self.names = 0
        self.default_guardian = default_guardian

    def name(self, base: str) -> str:
        self.names += 1
        return f"{base}{self.names}"

    def capacity(self) -> int | None:
        return self.rng.choice((1, 1, 2, 3, 4, 8, None))

    def leaf(self, base: str = "a", in_pool: bool = False) -> Spec:
        rng = self.rng
        restart = rng.choice(("transient", "transient", "permanent", "temporary"))
        is_async = rng.random() < 0.5
        return Spec(
            name=self.name(base),
            is_async=is_async,
            capacity=self.capacity(),
            restart=restart,
            timers=self.f["timers"] and rng.random() < 0.3,
            none_fail_every=(
                rng.choice((0, 2, 3, 5))
                if self.f["failures"] and self.f["none_messages"]
                else 0
            )
            * (not self.default_guardian),  # (their faults are not budgeted)
            in_pool=in_pool,
            tick=rng.choice((0.0005, 0.001, 0.004)),
            stubborn=is_async and self.f["stuck_on_stop"] and rng.random() < 0.3,
            unstash_every=rng.choice((1, 2, 5)),
            receive_timeout=(
                rng.choice((0.0005, 0.002, 0.01))
                if self.f["receive_timeout"] and rng.random() < 0.15
                else None
            ),
        )

    def strategy(self, holds_pool: bool = False) -> SupervisorStrategy:
        rng = self.rng
        kinds: list[type[SupervisorStrategy]] = [OneForOne]
        if self.f["group_strategies"]:
            kinds += [OneForAll, RestForOne]
        cls = rng.choice(kinds)
        directives = [Directive.RESUME, Directive.RESTART, Directive.STOP]
        if self.f["escalation"]:
            directives.append(Directive.ESCALATE)
        table = {kind: rng.choice(directives) for kind in FAULT_KINDS}
        table["resume"] = Directive.RESUME  # the usual reading of the names
        table["restart"] = Directive.RESTART
        if holds_pool and not self.f["resume_escalated_pool"]:
            # A pool escalates with its worker's fault: never resume it.
            table = {
                kind: Directive.RESTART if d is Directive.RESUME else d
                for kind, d in table.items()
            }

        def decider(
            exc: BaseException, table: dict[str, Directive] = table
        ) -> Directive:
            return table.get(getattr(exc, "kind", "restart"), Directive.RESTART)

        low = self.f["escalation"] and rng.random() < 0.3
        return cls(
            max_restarts=rng.randint(1, 4) if low else 1000,
            within=5.0,
            decider=decider,
            backoff=(
                Backoff(min_delay=0.0005, max_delay=0.002)
                if rng.random() < 0.2
                else None
            ),
        )

    def pool(self, routing: str) -> Spec:
        rng = self.rng
        worker = self.leaf("w", in_pool=True)
        worker.name = self.name("pool")
        worker.pool = routing
        worker.size = rng.randint(1, 4)
        worker.drain = rng.choice((None, 1, 2, 8))
        worker.timers = False
        return worker

    def routings(self) -> list[str]:
        return [r for r in ("round_robin", "shared_queue") if self.f[r]]

    def supervisor(self) -> Spec:
        rng = self.rng
        spec = self.leaf("s")
        spec.restart = "transient"
        spec.children = [self.leaf("c") for _ in range(rng.randint(2, 4))]
        routings = self.routings()
        holds_pool = bool(routings) and self.f["nested_pools"] and rng.random() < 0.5
        if holds_pool:
            spec.children.insert(
                rng.randrange(len(spec.children) + 1), self.pool(rng.choice(routings))
            )
        spec.strategy = self.strategy(holds_pool)
        return spec

    def top(self) -> Spec:
        rng = self.rng
        roll = rng.random()
        routings = self.routings()
        if roll < 0.45:
            return self.leaf()
        if roll < 0.75 or not routings:
            return self.supervisor()
        return self.pool(rng.choice(routings))


# -- one run --------------------------------------------------------------------------


@dataclass
class RunResult:
    seed: int
    backend: str
    ops: int = 0
    seconds: float = 0.0
    violations: list[str] = field(default_factory=list)
    totals: Counter[str] = field(default_factory=Counter)
    hang: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.violations and not self.hang and self.error is None

    def describe(self) -> str:
        head = (
            f"seed {self.seed} on {self.backend}: {self.ops} ops "
            f"in {self.seconds:.2f} s"
        )
        lines = [head]
        if self.hang:
            lines.append("HANG (did not end within its time bound)")
        if self.error:
            lines.append(f"error: {self.error}")
        lines += self.violations
        return "\n  ".join(lines)


class _CrashLog(logging.Handler):
    """Collects the runtime's "crashed in the runtime" records."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.crashes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "crashed in the runtime" in record.msg:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                text += (
                    ": "
                    + "".join(
                        traceback.format_exception_only(record.exc_info[1])
                    ).strip()
                )
            self.crashes.append(text)


class Run:
    def __init__(
        self,
        seed: int,
        backend: str,
        ops: int,
        features: Mapping[str, bool],
        boost: Mapping[str, int] | None = None,
    ) -> None:
        self.seed = seed
        self.backend = backend
        self.total_ops = ops
        self.f = {**FEATURES, **features}
        unknown = set(features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown campaign features: {sorted(unknown)}")
        self.rng = random.Random(seed)
        self.ledger = Ledger()
        self.world = World(self.ledger, self.rng)
        self.world.stash_timers = self.f["stash_timers"] and self.f["stash"]
        # The default guardian's per-child intensity (a third of the runs).
        self.default_guardian = self.f["default_guardian"] and seed % 3 == 1
        if self.default_guardian:
            self.world.budgets = {}
        self.builder = Builder(self.rng, self.f, self.default_guardian)
        self.native_ok = backend != "trio" and self.f["native_cancel"]
        self.stray_ok = backend != "trio" and self.f["stray_cancel"]
        self.done_ops = 0
        self.errors: list[str] = []
        self.system: ActorSystem | None = None
        op_weights = {
            "tell": 30 * self.f["tell"],
            "send": 15 * self.f["send"],
            "ask": 15 * self.f["ask"],
            "scoped_send": 6 * (self.f["send"] and self.f["cancel_scopes"]),
            "scoped_ask": 6 * (self.f["ask"] and self.f["cancel_scopes"]),
            "native_send": 4 * (self.native_ok and self.f["send"]),
            "native_ask": 4
            * (self.backend != "trio" and self.f["native_ask"] and self.f["ask"]),
            "broadcast": 3 * self.f["broadcast"],
            "stop": 1 * self.f["stops"],
            "spawn": 1 * self.f["stops"],
            "thread": 1 * (self.f["threads"] or self.f["thread_asks"]),
            "volley": 3 * self.f["ping_pong"],
            "register": 1 * self.f["registry"],
            "by_name": 2 * self.f["registry"],
            "yield": 10,
        }
        for name, factor in (boost or {}).items():
            if name not in op_weights:
                raise ValueError(f"unknown campaign operation: {name!r}")
            op_weights[name] *= factor
        self.op_names = [k for k, w in op_weights.items() if w]
        self.op_weights = [op_weights[k] for k in self.op_names]

    # -- messages ------------------------------------------------------------

    def message(self, kind: str, target: Any) -> tuple[object, int | None]:
        """A fresh message for ``target`` and its id (None for a bare None)."""
        rng = self.rng
        ledger = self.ledger
        if self.f["none_messages"] and rng.random() < 0.08:
            return None, None
        label = target.path
        if isinstance(target, PoolRef):
            label += f" ({target.routing} pool)"
        i = ledger.new_id(kind, label)
        if self.f["failures"]:
            roll = rng.random()
            may = self.world.may_fault
            if roll < 0.06:
                fault = rng.choice(
                    FAULT_KINDS if self.f["escalation"] else FAULT_KINDS[:3]
                )
                if may(target.path):
                    ledger.plans[i] = fault
            elif roll < 0.075 and self.f["stops"]:
                if may(target.path):  # a permanent child's exit: a restart
                    ledger.plans[i] = "stop"
            elif (
                roll < 0.08 and kind == "tell" and self.stray_ok and may(target.path)
            ):
                ledger.plans[i] = "stray"
        roll = rng.random()
        for plan, share in EXTRA_PLANS:
            if roll < share:
                if plan == "error_reply" and kind == "thread ask":
                    allowed = self.f["thread_error_replies"]
                else:
                    allowed = True
                if allowed and self.f[plan] and i not in ledger.plans:
                    ledger.plans[i] = plan
                break
            roll -= share
        shape = rng.randrange(3)
        if shape == 0:
            return Msg(i, rng.choice((None, 0, "x"))), i
        if shape == 1:
            return ("m", i), i
        return i, i

    def book(self, i: int | None, outcome: str, reply: object = None) -> None:
        self.world.book(i, outcome, reply)

    def pick(self) -> Any:
        """A random target, mostly a live one (stopped ones test rejection)."""
        rng = self.rng
        targets = list(self.world.targets.values())
        if not targets:
            return None
        if rng.random() < 0.85:
            live = [t for t in targets if t.is_alive]
            if live:
                return rng.choice(live)
        return rng.choice(targets)

    # -- operations -------------------------------------------------------------

    async def tell(self, target: Any) -> None:
        msg, i = self.message("tell", target)
        stopped = not target.is_alive
        try:
            target.tell(msg)
        except MailboxFull:
            self.book(i, REJECTED)
        except ActorStopped as exc:  # a tell to a stopped actor: a dead letter
            self.book(i, f"tell raised {exc!r}")
        else:
            self.book(i, ACCEPTED)
            if stopped and i is not None:
                # Not handled: a dead letter "actor stopped" at the call.
                self.ledger.told_stopped.add(i)

    async def send(self, target: Any, scope: anyio.CancelScope | None = None) -> None:
        msg, i = self.message("send" if scope is None else "scoped send", target)
        try:
            if scope is None:
                with anyio.move_on_after(10) as guard:
                    await target.send(msg)
                    self.book(i, ACCEPTED)
                    return
                if guard.cancelled_caught:
                    self.errors.append(f"send to {target.path} stuck for 10 s")
                    if len(self.errors) == 1:
                        self.errors.append(dump_tree(self.system, self.world.pools))
                    self.book(i, CANCELLED)
                return
            with scope:
                await target.send(msg)
                self.book(i, ACCEPTED)
                return
            self.book(i, CANCELLED)
        except ActorStopped:
            self.book(i, REJECTED)
        except BaseException:
            self.book(i, INFLIGHT)  # cancelled from outside: the system ends
            raise

    async def ask(self, target: Any, scope: anyio.CancelScope | None = None) -> None:
        rng = self.rng
        msg, i = self.message("ask" if scope is None else "scoped ask", target)
        timeout = rng.choice((0.0005, 0.002, 0.01, 0.05, 0.5))
        try:
            if scope is None:
                reply = await target.ask(msg, timeout)
                self.book(i, ASK_OK, reply)
                return
            with scope:
                reply = await target.ask(msg, timeout)
                self.book(i, ASK_OK, reply)
                return
            self.book(i, ABANDONED)
        except (Fault, Replied, AskTimeout, ActorStopped) as exc:
            book_ask_error(self.book, i, exc)
        except BaseException:
            self.book(i, INFLIGHT)  # cancelled from outside: the system ends
            raise

    def scope(self, tg: anyio.abc.TaskGroup) -> anyio.CancelScope:
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:  # a deadline already past
            return anyio.CancelScope(deadline=anyio.current_time() - 1)
        if roll < 0.4:
            return anyio.move_on_after(rng.choice((0.0001, 0.001)))
        scope = anyio.CancelScope()
        steps = rng.randrange(4)

        async def cancel_later() -> None:
            for _ in range(steps):
                await anyio.lowlevel.checkpoint()
            scope.cancel()

        tg.start_soon(cancel_later)
        return scope

    async def native(self, target: Any, asking: bool) -> None:
        rng = self.rng
        msg, i = self.message("native ask" if asking else "native send", target)
        timeout = rng.choice((0.002, 0.05, 0.5))

        async def op() -> None:
            try:
                if asking:
                    reply = await target.ask(msg, timeout)
                    self.book(i, ASK_OK, reply)
                else:
                    await target.send(msg)
                    self.book(i, ACCEPTED)
            except asyncio.CancelledError:
                self.book(i, ABANDONED if asking else UNCERTAIN)
            except (Fault, Replied, AskTimeout) as exc:
                book_ask_error(self.book, i, exc)
            except ActorStopped as exc:
                if asking:
                    book_ask_error(self.book, i, exc)
                else:
                    self.book(i, REJECTED)

        task = asyncio.get_running_loop().create_task(op())
        for _ in range(rng.randrange(4)):
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.wait([task])

    def broadcast(self, target: Any) -> None:
        pools = self.world.pools
        if not pools:
            return
        pool = pools[self.rng.choice(list(pools))]
        self.ledger.next_id += 1
        i = self.ledger.next_id
        self.ledger.casts[i] = pool.size
        if (
            self.f["failures"]
            and self.rng.random() < 0.05
            and self.world.may_fault(pool.path, pool.size)
        ):
            self.ledger.plans[i] = "restart"
        # MailboxFull: the others still got it (booked per worker). A stopped
        # pool: a dead letter per worker, no exception.
        try:
            pool.broadcast(Cast(i))
        except MailboxFull:
            pass
        except ActorStopped as exc:
            self.errors.append(f"broadcast {i} to {pool.path} raised {exc!r}")

    def stop(self) -> None:
        target = self.pick()
        if target is not None:
            target.stop()

    def spawn(self) -> None:
        system = self.system
        assert system is not None
        spec = self.builder.top()
        try:
            if spec.pool is not None:
                pool = system.spawn_pool(
                    node_class(spec),
                    spec.size,
                    self.world,
                    spec,
                    routing=spec.pool,  # type: ignore[arg-type]
                    name=spec.name,
                    capacity=spec.capacity,
                    drain=spec.drain,
                )
                self.world.targets[pool.path] = pool
                self.world.pools[pool.path] = pool
            else:
                ref = system.spawn(
                    node_class(spec),
                    self.world,
                    spec,
                    name=spec.name,
                    capacity=spec.capacity,
                    restart=spec.restart,  # type: ignore[arg-type]
                )
                self.world.targets[ref.path] = ref
        except (ActorStopped, SystemNotRunning):
            pass  # the system is going down

    def volley(self, target: Any) -> None:
        """A rally: ``target`` and another actor tell each other hops."""
        rng = self.rng
        back = self.pick()
        if back is None:
            return
        i = self.ledger.new_id("volley", target.path)
        hops = rng.randint(1, 30)
        try:
            target.tell(Volley(i, hops, back))
        except MailboxFull:
            self.book(i, REJECTED)
        except ActorStopped as exc:  # a tell to a stopped actor: a dead letter
            self.book(i, f"tell raised {exc!r}")
        else:
            self.book(i, ACCEPTED)

    def register(self, target: Any) -> None:
        system = self.system
        assert system is not None
        name = f"n{self.rng.randrange(6)}"
        if self.rng.random() < 0.2:
            system.unregister(name)
            return
        with contextlib.suppress(ValueError, ActorStopped, SystemNotRunning):
            system.register(name, target)

    async def by_name(self) -> None:
        """A tell or an ask to a registered name (a registration ends when its
        actor terminates: a name never gives a terminated actor)."""
        system = self.system
        assert system is not None
        name = f"n{self.rng.randrange(6)}"
        ref = system.whereis(name)
        if ref is None:
            return
        if self.rng.random() < 0.5:
            await self.tell(ref)
        else:
            await self.ask(ref)

    async def thread(self) -> None:
        """A few blocking calls from a worker thread (planned here, in the loop
        thread, so the seed decides them)."""
        system = self.system
        assert system is not None
        rng = self.rng
        plan: list[tuple[str, Any, object, int | None, float]] = []
        for _ in range(rng.randint(1, 4)):
            target = self.pick()
            if target is None:
                return
            whats = ["tell", "tell", "send"] if self.f["threads"] else []
            if self.f["thread_asks"]:
                whats.append("ask")
            what = rng.choice(whats)
            msg, i = self.message(f"thread {what}", target)
            plan.append((what, target, msg, i, rng.choice((0.001, 0.01, 0.2))))
        from_thread = system.from_thread

        def calls() -> None:
            for what, target, msg, i, timeout in plan:
                try:
                    if what == "tell":
                        from_thread.tell(target, msg)
                        self.book(i, ACCEPTED)
                    elif what == "send":
                        from_thread.send(target, msg, timeout)
                        self.book(i, ACCEPTED)
                    else:
                        reply = from_thread.ask(target, msg, timeout)
                        self.book(i, ASK_OK, reply)
                except SystemNotRunning:
                    self.book(i, UNCERTAIN)
                except (MailboxFull, ActorStopped) as exc:
                    if what == "ask":
                        queued = "before replying" in str(exc)
                        self.book(i, ASK_STOPPED_QUEUED if queued else ASK_STOPPED)
                    elif what == "tell" and isinstance(exc, ActorStopped):
                        # A tell to a stopped actor: a dead letter.
                        self.book(i, f"tell raised {exc!r}")
                    else:
                        self.book(i, REJECTED)
                except AskTimeout:
                    self.book(i, ABANDONED)
                except TimeoutError:  # send: no room in time, nothing enqueued
                    self.book(i, CANCELLED)
                except (Fault, Replied) as exc:
                    book_ask_error(self.book, i, exc)

        await anyio.to_thread.run_sync(calls)

    async def client(self, count: int) -> None:
        rng = self.rng
        names, weights = self.op_names, self.op_weights
        async with anyio.create_task_group() as tg:
            for _ in range(count):
                op = rng.choices(names, weights)[0]
                self.ledger.ops[op] += 1
                self.done_ops += 1
                if op == "yield":
                    await anyio.lowlevel.checkpoint()
                    continue
                if op == "stop":
                    self.stop()
                    continue
                if op == "spawn":
                    self.spawn()
                    continue
                if op == "thread":
                    await self.thread()
                    continue
                if op == "by_name":
                    await self.by_name()
                    continue
                target = self.pick()
                if target is None:
                    continue
                if op == "tell":
                    await self.tell(target)
                elif op == "send":
                    await self.send(target)
                elif op == "ask":
                    await self.ask(target)
                elif op == "scoped_send":
                    await self.send(target, self.scope(tg))
                elif op == "scoped_ask":
                    await self.ask(target, self.scope(tg))
                elif op == "native_send":
                    await self.native(target, asking=False)
                elif op == "native_ask":
                    await self.native(target, asking=True)
                elif op == "broadcast":
                    self.broadcast(target)
                elif op == "volley":
                    self.volley(target)
                elif op == "register":
                    self.register(target)

    async def stop_system(self, after: int, from_thread: bool) -> None:
        """``system.stop()`` after ``after`` checkpoints: the clients are then
        cancelled and the block ends as a normal exit."""
        system = self.system
        assert system is not None
        for _ in range(after):
            await anyio.lowlevel.checkpoint()
        self.ledger.ops["system stop"] += 1
        if from_thread:
            await anyio.to_thread.run_sync(system.stop)
        else:
            system.stop()

    async def main(self) -> None:
        rng = self.rng
        f = self.f
        shutdown_timeout = None
        if f["shutdown_timeout"] and rng.random() < 0.25:
            shutdown_timeout = rng.choice((0.0, 0.001, 0.01))
        stubborn_exit = f["stuck_on_stop"] and rng.random() < 0.5
        if stubborn_exit:  # the documented bound must end the exit
            shutdown_timeout = rng.choice((0.01, 0.05))
        system = ActorSystem(
            # A strategy given: OTP's shared intensity, never reached here.
            # None: the default guardian, its intensity per top-level actor.
            strategy=(
                None
                if self.default_guardian
                else OneForOne(max_restarts=10**9, within=1.0)
            ),
            dead_letters_kept=10**8,
            shutdown_timeout=shutdown_timeout,
            drain=rng.choice((1, 4, 64)),
        )
        abrupt = f["abrupt_exit"] and rng.random() < 0.2
        stop_after = -1  # checkpoints before system.stop() (-1: never)
        stop_from_thread = False
        if f["system_stop"] and not abrupt and rng.random() < 0.15:
            stop_after = rng.randrange(self.total_ops)
            stop_from_thread = rng.random() < 0.3
        letters: Callable[[], list[Any]] | None = None
        try:
            async with system:
                self.system = system
                if self.backend != "trio":
                    system._campaign_loop = asyncio.get_running_loop()  # type: ignore[attr-defined]
                letters = tap_dead_letters(system)
                for _ in range(rng.randint(3, 7)):
                    self.spawn()
                clients = rng.randint(2, 5)
                per = max(1, self.total_ops // clients)
                async with anyio.create_task_group() as tg:
                    for _ in range(clients):
                        tg.start_soon(self.client, per)
                    if abrupt:
                        for _ in range(rng.randrange(per * 2)):
                            await anyio.lowlevel.checkpoint()
                        tg.cancel_scope.cancel()
                    if stop_after >= 0:
                        tg.start_soon(self.stop_system, stop_after, stop_from_thread)
                self.world.exiting = stubborn_exit
        except Fault as exc:
            self.surfaced(exc, subtree_of(self._label_of(exc.key)))
        except StrayCancellation as exc:  # a "stray" plan's failure (no id)
            self.surfaced(exc, None)
        except RuntimeError as exc:
            # A permanent top-level actor's exits past the intensity.
            if "exceeded its restart intensity" not in str(exc):
                raise
            self.surfaced(exc, None)
        if letters is not None:
            self.dead_letters = letters()
        else:
            self.dead_letters = []


    def _label_of(self, key: object) -> str:
        if type(key) is tuple:  # a broadcast: ("cast", id, worker path)
            return str(key[2])
        return self.ledger.target.get(key, "?")  # type: ignore[call-overload]

    def surfaced(self, exc: BaseException, subtree: str | None) -> None:
        """A failure nobody handled ended the system: allowed only past the
        default guardian's intensity, by a subtree whose budget allowed more
        planned faults than that (``subtree`` None: any such one)."""
        over = self.world.over
        if self.default_guardian and (
            subtree in over if subtree is not None else bool(over)
        ):
            self.ledger.ops["guardian shutdowns"] += 1
            return
        self.errors.append(
            f"a planned fault surfaced from the system: {exc!r} (from "
            f"{subtree}; default guardian: {self.default_guardian}, "
            f"budgets {self.world.budgets}, allowed past: {sorted(over)})"
        )


_STATES = ("starting", "running", "suspended", "stopping", "terminated")


def dump_tree(
    system: ActorSystem | None, pools: Mapping[str, Any] | None = None
) -> str:
    """The actor tree with each cell's state, control queue and mailbox size
    (for a hang; read from another thread, so only roughly consistent)."""
    if system is None or system._runtime.guardian is None:
        return "(no system)"
    lines = []

    def walk(cell: Any, depth: int) -> None:
        mailbox = cell.mailbox
        size = len(mailbox) if hasattr(mailbox, "__len__") else len(mailbox._own)
        lines.append(
            f"{'  ' * depth}{cell.path} {_STATES[cell.state]}"
            f"{' stop-requested' if cell.stop_requested else ''} "
            f"control={[c[0] for c in cell.control]} "
            f"awaiting-control={cell.control_event is not None} mailbox={size!r:.60}"
        )
        for child in list(cell.children.values()):
            walk(child, depth + 1)

    walk(system._runtime.guardian, 0)
    for path, pool in list((pools or {}).items()):
        shared = pool._shared
        if shared is not None:
            state = shared.state
            lines.append(
                f"shared queue of {path}: pool {_STATES[pool._cell.state]}, "
                f"closed={shared.closed} buffered={len(state.buffer)} "
                f"senders={len(state.senders)} receivers={len(state.receivers)}"
            )
    loop = getattr(system, "_campaign_loop", None)
    if loop is not None:  # asyncio: where each actor task waits
        for task in list(asyncio.all_tasks(loop)):
            name = task.get_name()
            where = []
            coro: Any = task.get_coro()
            while coro is not None:
                frame = getattr(coro, "cr_frame", None)
                if frame is not None:
                    where.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
                    if frame.f_code.co_name == "handle_child_failure":
                        waited = frame.f_locals.get("cell")
                        where.append(
                            f"(waiting for {waited!r}: "
                            f"state {_STATES[waited.state]}, "
                            f"control {[c[0] for c in waited.control]}, "
                            f"stop {waited.stop_requested})"
                        )
                coro = getattr(coro, "cr_await", None)
            lines.append(f"task {name}: {' > '.join(where)}")
    return "tree:\n    " + "\n    ".join(lines)


def _run_in_thread(
    run: Run, backend: str, hard_timeout: float
) -> tuple[bool, str | None]:
    """Run ``run.main`` in a fresh thread with its own event loop.

    Returns:
        ``(finished, error)``: finished False means it hung past
        ``hard_timeout`` seconds (its stack is in ``error``).
    """
    name, options = BACKENDS[backend]
    outcome: dict[str, str | None] = {"error": None}

    def target() -> None:
        try:
            if options.get("use_uvloop"):
                import uvloop

                anyio.run(
                    run.main,
                    backend=name,
                    backend_options={"loop_factory": uvloop.new_event_loop},
                )
            else:
                anyio.run(run.main, backend=name)
        except BaseException as exc:
            outcome["error"] = "".join(traceback.format_exception(exc))

    thread = threading.Thread(target=target, name=f"campaign-{run.seed}", daemon=True)
    thread.start()
    thread.join(hard_timeout)
    if thread.is_alive():
        frame = sys._current_frames().get(thread.ident or 0)
        stack = "".join(traceback.format_stack(frame)) if frame else "?"
        return (
            False,
            f"hung; {dump_tree(run.system, run.world.pools)}\n"
            f"its thread's stack:\n{stack}",
        )
    return True, outcome["error"]


def run_seed(
    seed: int,
    backend: str = "asyncio",
    ops: int = 1000,
    features: Mapping[str, bool] | None = None,
    hard_timeout: float = 30.0,
    boost: Mapping[str, int] | None = None,
) -> RunResult:
    """One seeded run; see the module docstring.

    Args:
        seed: decides the tree and the operations.
        backend: "asyncio", "uvloop" or "trio".
        ops: operations, spread over the client tasks.
        features: switches to change from :data:`FEATURES`.
        hard_timeout: seconds after which the run counts as hung.
        boost: operation name -> factor on its weight (to aim at one class).
    """
    run = Run(seed, backend, ops, features or {}, boost)
    result = RunResult(seed, backend)
    logger = logging.getLogger("actors")
    crash_log = _CrashLog()
    level = logger.level
    logger.setLevel(logging.ERROR)  # failures are the point: no warning spam
    logger.addHandler(crash_log)
    started = time.perf_counter()
    try:
        finished, error = _run_in_thread(run, backend, hard_timeout)
    finally:
        logger.removeHandler(crash_log)
        logger.setLevel(level)
    result.seconds = time.perf_counter() - started
    result.ops = run.done_ops
    result.hang = not finished
    result.error = error
    result.violations = [f"runtime crash: {c}" for c in crash_log.crashes] + run.errors
    if finished and error is None:
        violations, totals = check(run.ledger, run.dead_letters)
        result.violations += violations
        result.totals = totals
    result.totals.update({f"op {k}": v for k, v in run.ledger.ops.items()})
    return result
