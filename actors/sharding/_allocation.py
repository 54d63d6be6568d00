"""Where shards go: the allocation strategy a shard coordinator asks, and the
default, least shards per node (Akka's ``LeastShardAllocationStrategy`` as
rewritten in Akka 2.6.10: one pass moves at most a bounded number of shards,
so a joining node takes its share gradually).

A strategy is pure: it sees the nodes that may host a type (each with the
shards it holds) and answers with a node or a set of shards. It never talks
to the store or to a node, so it is tested alone, and any strategy is safe:
the coordinator, not the strategy, moves shards one hand-off at a time.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Protocol, final, runtime_checkable

__all__ = ["AllocationStrategy", "LeastShardAllocation"]


@runtime_checkable
class AllocationStrategy(Protocol):
    """Decides where a shard starts and which shards move (Akka's
    ``ShardAllocationStrategy``).

    ``current`` maps every node that may host the type now (up, not leaving,
    with the type's role) to the shards it holds; a node holding none is in it
    with an empty collection.
    """

    def allocate(self, shard: int, current: Mapping[str, Collection[int]]) -> str:
        """The node that ``shard``, which has no home, starts on: one of
        ``current``'s keys (``current`` is never empty)."""
        ...

    def rebalance(
        self, current: Mapping[str, Collection[int]], in_progress: Collection[int]
    ) -> set[int]:
        """The shards to move now (each is handed off, then allocated again),
        given the shards still ``in_progress`` from the last rebalance. Every
        shard returned is one of ``current``'s."""
        ...


@final
class LeastShardAllocation:
    """Least shards per node (Akka's default strategy).

    ``allocate`` picks the node holding the fewest shards (ties: the smallest
    node name, so every coordinator agrees). ``rebalance`` moves shards only
    when no earlier rebalance is in progress, and at most ``limit`` of them at
    once, ``limit = max(1, min(absolute_limit, int(relative_limit * total)))``
    for ``total`` shards allocated: first the shards above the optimal count
    per node (``ceil(total / nodes)``), then, if none is above, one shard from
    each node at the optimum while some node is two or more below it. It
    returns nothing once the counts differ by at most one between nodes.

    Args:
        absolute_limit: the most shards one rebalance moves (>= 1; Akka's
            default 20).
        relative_limit: the most shards one rebalance moves as a fraction of
            the allocated shards (> 0 and <= 1; Akka's default 0.1).

    Raises:
        TypeError: a limit is not a number (``absolute_limit`` not an int).
        ValueError: ``absolute_limit`` < 1, or ``relative_limit`` not in (0, 1].
    """

    __slots__ = ("absolute_limit", "relative_limit")

    def __init__(self, absolute_limit: int = 20, relative_limit: float = 0.1) -> None:
        if type(absolute_limit) is not int:
            raise TypeError(f"absolute_limit is an int, not {absolute_limit!r}")
        if absolute_limit < 1:
            raise ValueError(f"absolute_limit must be >= 1, not {absolute_limit}")
        if isinstance(relative_limit, bool) or not isinstance(
            relative_limit, int | float
        ):
            raise TypeError(f"relative_limit is a number, not {relative_limit!r}")
        if not (math.isfinite(relative_limit) and 0 < relative_limit <= 1):
            raise ValueError(f"relative_limit must be in (0, 1], not {relative_limit}")
        self.absolute_limit = absolute_limit
        self.relative_limit = float(relative_limit)

    def limit(self, total: int) -> int:
        """The most shards one rebalance moves when ``total`` are allocated."""
        return max(1, min(self.absolute_limit, int(self.relative_limit * total)))

    def allocate(self, shard: int, current: Mapping[str, Collection[int]]) -> str:
        """The node with the fewest shards (ties: the smallest name).

        Raises:
            ValueError: ``current`` is empty (no node may host the type).
        """
        if not current:
            raise ValueError(f"no node may host shard {shard}: current is empty")
        return min(current, key=lambda node: (len(current[node]), node))

    def rebalance(
        self, current: Mapping[str, Collection[int]], in_progress: Collection[int]
    ) -> set[int]:
        """The shards to move now; see the class docstring."""
        if in_progress or len(current) < 2:
            return set()
        # Most loaded first; each node's shards in a fixed order.
        nodes = sorted(current, key=lambda node: (-len(current[node]), node))
        total = sum(len(current[node]) for node in nodes)
        if total == 0:
            return set()
        optimal = -(-total // len(nodes))  # ceil
        limit = self.limit(total)
        above: list[int] = []
        for node in nodes:
            held = sorted(current[node])
            if len(held) > optimal:
                above.extend(held[optimal:])
        if above:
            return set(above[:limit])
        below = sum(max(0, optimal - 1 - len(current[node])) for node in nodes)
        if below == 0:
            return set()
        take = min(below, limit)
        chosen = [max(current[node]) for node in nodes if len(current[node]) >= optimal]
        return set(chosen[:take])

    def __repr__(self) -> str:
        return (
            f"LeastShardAllocation(absolute_limit={self.absolute_limit}, "
            f"relative_limit={self.relative_limit})"
        )
