"""``ShardRegion``: the actor of one entity type on one node (Akka's
``ShardRegion``): it routes the slow path's messages to the shards it hosts
or to the peer region that holds (or was allocated) a shard, takes a shard's
lease before starting it (holding its messages meanwhile), renews its
leases and its membership, fences a shard whose lease it could not renew
before the lease can expire, hands shards off (rebalance, leaving), and,
while it holds the type's coordinator lease, plans the rebalance.

It never waits on the placement store in its handler: store calls run in the
background (``context.run``) and come back as messages, so a slow or cut-off
store delays no routing and no fence.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Final, TypeVar

import anyio

from .. import ActorRef, Result, Terminated
from ._region_base import region_name
from ._region_leave import Departure
from ._region_messages import (
    Acquired,
    Downed,
    Forward,
    HandOffShard,
    Leave,
    Leaving,
    LeavingAck,
    Located,
    Rebalanced,
    Released,
    RememberedShards,
    Renewed,
    ShardMoved,
    TakeShard,
)
from ._shard import HandedOff, HandOff, Shard, remembered_prefix
from ._state import Deliver, ShardState

__all__ = ["ShardRegion", "region_name"]


T = TypeVar("T")

_TICK: Final = "sharding-tick"
_FENCE: Final = "sharding-fence"
#: Rebalance rounds a move may stay in progress before it is let go.
_MOVE_ROUNDS: Final = 4


class ShardRegion(Departure):
    """One entity type on one node (see the module docstring; what it holds
    and its plumbing are ``RegionBase``'s)."""

    def on_start(self) -> None:
        self.types.region = self.context.self_ref
        self.context.timers.start_periodic(_TICK, _TICK, self.renew_every)
        if self.wire is not None:  # its queues to peers on other nodes
            self.context.run(self.wire.links.run, then=lambda r: r.value)
        if not self.hosting:
            return  # a proxy: no membership, no shards, nothing remembered
        self._round("join", self.coordination.join, self._joined)
        store = self.remember
        if store is not None and self.types.entity.remember:
            prefix = remembered_prefix(self.types.entity.type_name)

            async def shards() -> set[int]:
                found = await store.list(prefix)
                return {int(e.key[len(prefix) :].partition("/")[0]) for e in found}

            self._store_call(
                shards, lambda r: RememberedShards(r.value if r.ok else set())
            )

    def receive(self, message: Any) -> Any:
        kind = type(message)
        if kind is self.fast_kind:  # a peer node's remote fast path
            self.wire.tells_in(message, self.receive)
        elif kind is Deliver:
            if message.shard in self.moving_away:
                self.parked.setdefault(message.shard, deque()).append(message)
            else:
                self._route(message)
        elif kind is Forward:
            shard = message.deliver.shard
            self.types.inflight[shard] += 1
            self.allocated.add(shard)
            # The sender found this node the shard's home: one not hosted
            # here is located again from the store, not sent on by a cached
            # home (after a fence two regions could pass it back and forth
            # for ever), unless this node handed it off to that home.
            if shard not in self.handed_to:
                self.homes.pop(shard, None)
            self._route(message.deliver)
        elif kind is Located:
            self._located(message.shard, message.node)
        elif kind is Acquired:
            self._acquired(message.shard)
        elif message == _TICK:
            self._tick()
        elif kind is Renewed:
            for shard in message.lost:
                self._fence(shard)
            self._arm_fence()
        elif message == _FENCE:
            for shard in self.leases.expiring():
                self._fence(shard)
            self._arm_fence()
        elif kind is HandOffShard:
            self.hand_off(message.shard)
        elif kind is HandedOff:
            self._handed_off(message)
        elif kind is Released:
            self._released(message.shard)
        elif kind is Rebalanced:
            self._rebalance(message)
        elif kind is Downed:
            self._on_downed(message)
        elif kind is Leave:
            self._leave(message)
        elif kind is Leaving:
            self._peer_leaving(message.node)
            self._tell(message.region, LeavingAck(self.leases.node))
        elif kind is LeavingAck:
            self.unacked.discard(message.node)
            self._leave_if_done()
        elif kind is ShardMoved:
            self._unpark(message.shard)
        elif kind is TakeShard:
            if message.shard not in self.shards:
                self.allocated.add(message.shard)
                self.pending.setdefault(message.shard, deque())
                self._locate(message.shard)
        elif kind is RememberedShards:
            for shard in sorted(message.shards):
                self.pending.setdefault(shard, deque())
                self._locate(shard)
        elif kind is Terminated:
            self._stopped(message.ref)
        elif kind in self.wire_kinds:  # from a peer region on another node
            local = self.wire.inbound(message)
            if local is not None:
                self.receive(local)
        elif kind is not Result:  # a background call's unneeded outcome
            raise TypeError(f"a shard region got {message!r}")

    # -- routing ------------------------------------------------------------

    def _route(self, message: Deliver) -> None:
        shard = message.shard
        ref = self.shards.get(shard)
        if ref is not None and shard not in self.handing_off:
            self.types.hosted[shard].forwarded += 1
            ref.tell(message)
            return
        home = self.homes.get(shard)
        if home is not None and shard not in self.pending:
            self.types.delivered(shard)  # it leaves this node's count
            self._tell(home[1], Forward(message))
            return
        pending = self.pending.get(shard)
        if pending is None:
            pending = self.pending[shard] = deque()
        pending.append(message)
        if shard not in self.handing_off:
            self._locate(shard)

    def _locate(self, shard: int) -> None:
        """Find the shard's home in the background: this node (its lease
        taken) or a peer."""
        if shard in self.locating or shard in self.shards:
            return
        self.locating.add(shard)
        leases, coordination = self.leases, self.coordination
        allocated = shard in self.allocated
        leaving = self.leaving is not None or not self.hosting
        node = leases.node
        remote = self.wire is not None

        async def locate() -> str | None:
            home = await coordination.home(shard, allocated=allocated, leaving=leaving)
            if home == node and not leaving:
                if await leases.acquire(shard):
                    return node
                home = await leases.owner(shard)
            if remote and home is not None and home != node:
                # Where its region is reached, read again: a node that
                # rejoined as a new incarnation is reached at a new address.
                await coordination.address(home)
            return home

        def then(result: Result[str | None]) -> object:
            self.locating.discard(shard)
            return Located(shard, result.value if result.ok else None)

        self._store_call(locate, then)

    def _located(self, shard: int, node: str | None) -> None:
        if node == self.leases.node:
            self.allocated.discard(shard)
            self._acquired(shard)
            return
        peer = None if node is None else self._peer(node)
        if node is not None and peer is not None and node in self.departed:
            # Found before its leave was known here: hold the messages until
            # it says where the shard went, or ends (then locate it again).
            self.moving_away[shard] = node
            parked = self.parked.setdefault(shard, deque())
            parked.extendleft(reversed(self.pending.pop(shard, deque())))
            return
        if peer is None or node is None:
            if self.leaving is not None:
                self._drop_pending(shard, "sharding left: no other node hosts the type")
                self._moved(shard)
                self._leave_if_done()
            return  # retried on the next tick
        self.allocated.discard(shard)
        self.homes[shard] = (node, peer)
        types = self.types
        held = self.pending.pop(shard, deque())
        for message in held:
            types.delivered(shard)
            self._tell(peer, Forward(message))
        self._open_fast(shard)
        if shard in self.rehoming:
            self.rehoming.discard(shard)
            if not held:
                self._tell(peer, TakeShard(shard))  # its remembered entities start now
        if self.leaving is not None:
            self._moved(shard)
        self._leave_if_done()

    def _acquired(self, shard: int) -> None:
        if shard in self.shards or not self.leases.holds(shard):
            return
        self.handed_to.discard(shard)
        types = self.types
        self.homes.pop(shard, None)
        state = types.hosted[shard] = ShardState(shard)
        ref = self.context.spawn(
            Shard,
            types,
            state,
            self.context.self_ref,
            self.remember,
            name=f"shard-{shard}-{types.activations}-{types.hand_offs}",
        )
        self.context.watch(ref)
        self.shards[shard] = ref
        for message in self.pending.pop(shard, ()):
            state.forwarded += 1
            ref.tell(message)
        self._arm_fence()
        if self.leaving is not None and "leave" not in self.busy:
            self.hand_off(shard)  # taken while leaving (a locate under way)

    # -- leases, membership, rebalance ---------------------------------------

    def _tick(self) -> None:
        leases, coordination = self.leases, self.coordination
        if leases.held:
            self._round(
                "renew", leases.renew, lambda r: Renewed(r.value if r.ok else [])
            )
        self._mark_downed()
        if self.leaving is None and self.hosting:
            self._round("join", coordination.join, self._joined)
            moving = {shard: node for shard, (node, _) in self.moving.items()}
            self._round(
                "rebalance",
                lambda: coordination.rebalance(moving),
                lambda r: Rebalanced(*r.value) if r.ok else r,
            )
        for shard in list(self.pending):
            if shard not in self.handing_off:
                self._locate(shard)
        if self.wire is not None:
            self.wire.expire(anyio.current_time())

    def _rebalance(self, message: Rebalanced) -> None:
        # A move still in progress after _MOVE_ROUNDS rounds no longer holds
        # the rebalance up (its holder took the shard back, or never got the
        # request): the next round plans from the store as it is.
        self.moving = {
            shard: (node, self.moving.get(shard, (node, 0))[1] + 1)
            for shard, node in message.still.items()
            if self.moving.get(shard, (node, 0))[1] < _MOVE_ROUNDS
        }
        for shard, node in message.plan.items():
            self.moving[shard] = (node, 0)
            if node == self.leases.node:
                self.hand_off(shard)
            else:
                peer = self._peer(node)
                if peer is not None:
                    self._tell(peer, HandOffShard(shard))

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
        if self.pending.get(shard):
            self._locate(shard)
        self._leave_if_done()

    def _stopped(self, ref: ActorRef[Any]) -> None:
        self._peer_ended(ref)
        for shard, known in list(self.shards.items()):
            if known == ref:  # it failed: nothing of it may go on running
                self.shards.pop(shard)
                self.types.fence(shard)
                self.handing_off.discard(shard)
                self._release(shard)
        gone = {name for name, peer in self.homes.values() if peer == ref}
        for shard, (name, _) in list(self.homes.items()):
            if name in gone:  # a peer region stopped: find the shard again
                del self.homes[shard]
        for shard, name in list(self.moving_away.items()):
            if self._peer(name) is None:
                self._unpark(shard)
        for name in list(self.unacked):
            if self._peer(name) is None:  # it ended: it sends nothing more
                self.unacked.discard(name)
        self._leave_if_done()

    # -- hand-off -----------------------------------------------------------

    def hand_off(self, shard: int) -> None:
        """Stop routing to ``shard`` (new messages wait here) and ask it to
        stop its entities (after their queued messages)."""
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
        self._store_call(lambda: leases.release(shard), lambda _: Released(shard))

    def _released(self, shard: int) -> None:
        self.handing_off.discard(shard)
        self.handed_to.add(shard)
        self.allocated.discard(shard)  # given away: the strategy decides
        if self.types.entity.remember:
            self.rehoming.add(shard)
        if self.leaving is not None and not self.pending.get(shard):
            self.pending.pop(shard, None)
            self._moved(shard)
        elif self.pending.get(shard) or (
            self.types.entity.remember and self.leaving is None
        ):
            self.pending.setdefault(shard, deque())
            self._locate(shard)  # its next home (remembered: started at once)
        else:
            self.pending.pop(shard, None)
        self._leave_if_done()
