"""The messages between a shard region, its peers (the same type's regions
on other nodes) and its own background work: small typed structs."""

from __future__ import annotations

from typing import Any, final

import anyio

from ._state import Deliver

__all__ = [
    "Acquired",
    "Downed",
    "Forward",
    "HandOffShard",
    "Leave",
    "Leaving",
    "LeavingAck",
    "Located",
    "Rebalanced",
    "Released",
    "RememberedShards",
    "Renewed",
    "ShardMoved",
    "TakeShard",
]


@final
class Leave:
    """Sharding -> region: hand every shard off (to the peers when there are
    some), give the leases back, then set ``done``."""

    __slots__ = ("done",)

    def __init__(self, done: anyio.Event) -> None:
        self.done = done


@final
class Forward:
    """Region -> peer region: a slow-path message for a shard the peer holds
    or was allocated."""

    __slots__ = ("deliver",)

    def __init__(self, deliver: Deliver) -> None:
        self.deliver = deliver


@final
class Leaving:
    """Region -> peer regions: ``node`` leaves; send it nothing more, and
    answer ``LeavingAck`` to ``region`` (what was sent before it is then in
    the leaving region's mailbox)."""

    __slots__ = ("node", "region")

    def __init__(self, node: str, region: Any) -> None:
        self.node = node
        self.region = region


@final
class LeavingAck:
    """Peer region -> leaving region: ``node`` will send it nothing more."""

    __slots__ = ("node",)

    def __init__(self, node: str) -> None:
        self.node = node


@final
class ShardMoved:
    """Leaving region -> peer regions: ``shard`` has a new home (or none):
    what a peer held back for it since ``Leaving`` may go now."""

    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class TakeShard:
    """Region -> peer region: take ``shard`` (it was allocated to the peer;
    sent for a remembered type's shard, whose entities start at once)."""

    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class HandOffShard:
    """Coordinator -> the region holding ``shard``: hand it off (rebalance)."""

    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class Located:
    """Background -> region: where ``shard``'s messages go (None: nowhere
    yet)."""

    __slots__ = ("node", "shard")

    def __init__(self, shard: int, node: str | None) -> None:
        self.shard = shard
        self.node = node


@final
class Downed:
    """Background -> region: whether a peer declared this node down (the
    outcome of a membership renewal)."""

    __slots__ = ("down",)

    def __init__(self, down: bool) -> None:
        self.down = down


@final
class Acquired:
    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class Renewed:
    __slots__ = ("lost",)

    def __init__(self, lost: list[int]) -> None:
        self.lost = lost


@final
class Released:
    __slots__ = ("shard",)

    def __init__(self, shard: int) -> None:
        self.shard = shard


@final
class RememberedShards:
    __slots__ = ("shards",)

    def __init__(self, shards: set[int]) -> None:
        self.shards = shards


@final
class Rebalanced:
    """Background -> coordinator region: the shards to move (-> holder), and
    the moves still in progress."""

    __slots__ = ("plan", "still")

    def __init__(self, plan: dict[int, str], still: dict[int, str]) -> None:
        self.plan = plan
        self.still = still
