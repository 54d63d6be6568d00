"""``ShardRegion``: the actor of one entity type on one node (Akka's
``ShardRegion``): it routes the slow path's messages to the shards it hosts,
takes the lease of a shard before starting it (holding its messages
meanwhile), renews its leases, fences a shard whose lease it could not renew
before the lease can expire, and hands its shards off when the node leaves.

It never waits on the placement store in its handler: store calls run in the
background (``context.run``) and come back as messages, so a slow or cut-off
store delays no routing and no fence.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, final

import anyio

from .. import Actor, Result, Terminated
from ._errors import PlacementUnavailable
from ._lease import Leases
from ._shard import HandedOff, HandOff, Shard, remembered_prefix
from ._state import Deliver, ShardState, TypeState
from ._store import PlacementStore

__all__ = ["Leave", "ShardRegion"]

T = TypeVar("T")

_TICK: Final = "sharding-tick"
_FENCE: Final = "sharding-fence"


@final
class Leave:
    """Sharding -> region: hand every shard off, give the leases back, then
    set ``done``."""

    __slots__ = ("done",)

    def __init__(self, done: anyio.Event) -> None:
        self.done = done


@final
class _Acquired:
    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class _Renewed:
    __slots__ = ("lost",)

    def __init__(self, lost: list[int]) -> None:
        self.lost = lost


@final
class _Released:
    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class _RememberedShards:
    __slots__ = ("shards",)

    def __init__(self, shards: set[int]) -> None:
        self.shards = shards


class ShardRegion(Actor[Any]):
    """One entity type on one node (see the module docstring).

    Args:
        types: the type's shared state on this node.
        leases: this node's leases of the type's shards.
        remember: where remembered entities are kept (None: nowhere).
        renew_every: seconds between lease renewals.
        store_timeout: seconds a store call may take before it counts as
            unanswered (on the event loop's clock).
    """

    def __init__(
        self,
        types: TypeState,
        leases: Leases,
        remember: PlacementStore | None,
        renew_every: float,
        store_timeout: float,
    ) -> None:
        self.types = types
        self.leases = leases
        self.remember = remember
        self.renew_every = renew_every
        self.store_timeout = store_timeout
        #: shard -> its Shard actor, for the shards hosted here
        self.shards: dict[int, Any] = {}
        #: shard -> messages held until the shard has a home here
        self.pending: dict[int, deque[Deliver]] = {}
        self.acquiring: set[int] = set()
        self.handing_off: set[int] = set()
        self.renewing = False
        self.leaving: Leave | None = None

    def _store_call(
        self, call: Callable[[], Awaitable[T]], then: Callable[[Result[T]], object]
    ) -> None:
        timeout = self.store_timeout

        async def bounded() -> T:
            with anyio.move_on_after(timeout):
                return await call()
            raise PlacementUnavailable(f"the store did not answer within {timeout} s")

        self.context.run(bounded, then=then)

    def on_start(self) -> None:
        self.types.region = self.context.self_ref
        self.context.timers.start_periodic(_TICK, _TICK, self.renew_every)
        store = self.remember
        if store is not None and self.types.entity.remember:
            prefix = remembered_prefix(self.types.entity.type_name)

            async def shards() -> set[int]:
                found = await store.list(prefix)
                return {int(e.key[len(prefix) :].partition("/")[0]) for e in found}

            self._store_call(
                shards, lambda r: _RememberedShards(r.value if r.ok else set())
            )

    def receive(self, message: Any) -> Any:
        kind = type(message)
        if kind is Deliver:
            self._route(message)
        elif kind is _Acquired:
            self._acquired(message.shard)
        elif message == _TICK:
            self._tick()
        elif kind is _Renewed:
            self.renewing = False
            for shard in message.lost:
                self._fence(shard)
            self._arm_fence()
        elif message == _FENCE:
            for shard in self.leases.expiring():
                self._fence(shard)
            self._arm_fence()
        elif kind is HandedOff:
            self._handed_off(message)
        elif kind is _Released:
            self._released(message.shard)
        elif kind is Leave:
            self._leave(message)
        elif kind is _RememberedShards:
            for shard in sorted(message.shards):
                if shard not in self.shards:
                    self.pending.setdefault(shard, deque())
                    self._acquire(shard)
        elif kind is Terminated:
            self._shard_stopped(message.ref)
        elif kind is Result:
            pass  # a failed acquisition or release: retried on the next tick
        else:
            raise TypeError(f"a shard region got {message!r}")

    # -- routing ------------------------------------------------------------

    def _route(self, message: Deliver) -> None:
        shard = message.shard
        ref = self.shards.get(shard)
        if ref is not None and shard not in self.handing_off:
            self.types.hosted[shard].forwarded += 1
            ref.tell(message)
            return
        pending = self.pending.get(shard)
        if pending is None:
            pending = self.pending[shard] = deque()
        pending.append(message)
        if self.leaving is not None:
            self._drop_pending(shard, "sharding is leaving")
        elif shard not in self.handing_off:
            self._acquire(shard)

    def _acquire(self, shard: int) -> None:
        if shard in self.acquiring or self.leaving is not None:
            return
        self.acquiring.add(shard)
        leases = self.leases

        def then(result: Result[bool]) -> object:
            self.acquiring.discard(shard)
            return _Acquired(shard) if result.ok and result.value else result

        self._store_call(lambda: leases.acquire(shard), then)

    def _acquired(self, shard: int) -> None:
        if shard in self.shards or not self.leases.holds(shard):
            return
        types = self.types
        state = types.hosted[shard] = ShardState(shard)
        ref = self.context.spawn(
            Shard,
            types,
            state,
            self.context.self_ref,
            self.remember,
            name=f"shard-{shard}-{types.activations}-{len(self.shards)}",
        )
        self.context.watch(ref)
        self.shards[shard] = ref
        pending = self.pending.pop(shard, ())
        for message in pending:
            state.forwarded += 1
            ref.tell(message)
        self._arm_fence()

    # -- leases -------------------------------------------------------------

    def _tick(self) -> None:
        if not self.renewing and self.leases.held:
            self.renewing = True
            leases = self.leases

            def then(result: Result[list[int]]) -> object:
                return _Renewed(result.value if result.ok else [])

            self._store_call(leases.renew, then)
        for shard in list(self.pending):
            if shard not in self.handing_off:
                self._acquire(shard)

    def _arm_fence(self) -> None:
        deadline = self.leases.next_deadline()
        timers = self.context.timers
        if deadline is None:
            timers.cancel(_FENCE)
            return
        delay = max(0.0, deadline - self.types.now())
        timers.start_single(_FENCE, _FENCE, delay if math.isfinite(delay) else 0.0)

    def _fence(self, shard: int) -> None:
        """The lease of ``shard`` is given up: its entities stop now."""
        self.types.fence(shard)
        self.handing_off.discard(shard)
        ref = self.shards.pop(shard, None)
        if ref is not None:
            ref.stop()
        if self.leaving is not None:
            self._drop_pending(shard, "sharding is leaving")
            self._leave_if_done()
        elif self.pending.get(shard):
            self._acquire(shard)

    def _shard_stopped(self, ref: Any) -> None:
        for shard, known in list(self.shards.items()):
            if known == ref:  # it failed: nothing of it may go on running
                self.shards.pop(shard)
                self.types.fence(shard)
                self.handing_off.discard(shard)
                self._release(shard)

    # -- hand-off -----------------------------------------------------------

    def hand_off(self, shard: int) -> None:
        """Stop routing to ``shard`` (new messages wait here) and ask it to
        stop its entities."""
        ref = self.shards.get(shard)
        if ref is None or shard in self.handing_off:
            return
        self.handing_off.add(shard)
        self.pending.setdefault(shard, deque())
        ref.tell(HandOff())

    def _handed_off(self, message: HandedOff) -> None:
        shard = message.shard
        if self.shards.pop(shard, None) is None:
            return
        types = self.types
        types.hosted.pop(shard, None)
        types.hand_offs += 1
        held = self.pending.setdefault(shard, deque())
        held.extendleft(reversed(message.leftovers))
        self._release(shard)
        self._arm_fence()

    def _release(self, shard: int) -> None:
        leases = self.leases
        self._store_call(lambda: leases.release(shard), lambda _: _Released(shard))

    def _released(self, shard: int) -> None:
        self.handing_off.discard(shard)
        if self.leaving is not None:
            self._drop_pending(shard, "sharding left")
            self._leave_if_done()
        elif self.pending.get(shard):
            self._acquire(shard)

    def _drop_pending(self, shard: int, reason: str) -> None:
        types = self.types
        for message in self.pending.pop(shard, ()):
            types.delivered(shard)
            types.drop(message.message, reason)

    def _leave(self, message: Leave) -> None:
        self.leaving = message
        for shard in list(self.pending):
            if shard not in self.handing_off:
                self._drop_pending(shard, "sharding is leaving")
        for shard in list(self.shards):
            self.hand_off(shard)
        self._leave_if_done()

    def _leave_if_done(self) -> None:
        if self.leaving is not None and not self.shards and not self.handing_off:
            self.context.timers.cancel_all()
            self.leaving.done.set()
