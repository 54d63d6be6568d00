"""The pure parts of sharding: the stable shard of a key, the entity type's
validation, and the least-shards allocation strategy's invariants (hypothesis
models: any layout, any sequence of rebalances)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors import Actor
from actors.sharding import (
    AllocationStrategy,
    Entity,
    LeastShardAllocation,
    shard_of,
)


class Counter(Actor[int]):
    def __init__(self, key: str) -> None:
        self.key = key

    def receive(self, message: int) -> int:
        return message


# -- the shard of a key ------------------------------------------------------


def test_the_shard_of_a_key_is_the_same_in_every_process_whatever_its_hash_seed() -> (
    None
):
    code = (
        "from actors.sharding import shard_of;"
        "print([shard_of(k, 100) for k in ('42', 'account-7', 'é', 'x' * 900)])"
    )
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    here = str([shard_of(k, 100) for k in ("42", "account-7", "é", "x" * 900)])
    assert outputs == {here + "\n"}


def test_the_shard_of_a_key_is_pinned_so_a_new_version_moves_no_key() -> None:
    # A change of hash would move every entity of every deployed cluster.
    assert [shard_of(k, 1000) for k in ("0", "1", "42", "account-42")] == [
        789,
        910,
        738,
        578,
    ]
    assert shard_of("42", 1) == 0


@given(st.text(min_size=1, max_size=50), st.integers(min_value=1, max_value=10_000))
def test_the_shard_of_a_key_is_within_the_shard_count(key: str, shards: int) -> None:
    assert 0 <= shard_of(key, shards) < shards


def test_keys_spread_over_the_shards() -> None:
    counts = [0] * 10
    for i in range(10_000):
        counts[shard_of(str(i), 10)] += 1
    assert min(counts) > 800 and max(counts) < 1200


@pytest.mark.parametrize(
    ("key", "shards", "error", "words"),
    [
        (42, 10, TypeError, "str"),
        ("", 10, ValueError, "empty"),
        ("x" * 1025, 10, ValueError, "1024"),
        ("k", 0, ValueError, ">= 1"),
        ("k", 2.0, TypeError, "int"),
    ],
)
def test_a_bad_key_or_shard_count_names_what_is_wrong(
    key: object, shards: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        shard_of(key, shards)  # type: ignore[arg-type]


# -- entity types --------------------------------------------------------------


def test_an_entity_type_keeps_its_options() -> None:
    entity = Entity("account", Counter, shards=7, passivate_after=3, role="db")
    assert (entity.type_name, entity.shards, entity.passivate_after) == (
        "account",
        7,
        3.0,
    )
    assert entity.role == "db" and entity.remember is False
    assert "account" in repr(entity)


def test_entities_passivate_after_two_minutes_unless_remembered() -> None:
    assert Entity("a", Counter).passivate_after == 120.0
    assert Entity("a", Counter, remember=True).passivate_after is None
    assert Entity("a", Counter, passivate_after=None).passivate_after is None


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"type_name": ""}, ValueError, "type_name"),
        ({"type_name": "a/b"}, ValueError, "type_name"),
        ({"type_name": 3}, TypeError, "type_name"),
        ({"factory": 3}, TypeError, "factory"),
        ({"shards": 0}, ValueError, "shards"),
        ({"shards": True}, TypeError, "shards"),
        ({"passivate_after": 0}, ValueError, "passivate_after"),
        ({"passivate_after": float("inf")}, ValueError, "passivate_after"),
        ({"passivate_after": "1"}, TypeError, "passivate_after"),
        ({"remember": True, "passivate_after": 5}, ValueError, "remember"),
        ({"remember": 1}, TypeError, "remember"),
        ({"role": ""}, TypeError, "role"),
        ({"buffer": 0}, ValueError, "buffer"),
        ({"stop_message": []}, TypeError, "stop_message"),
    ],
)
def test_a_bad_entity_option_names_what_is_wrong(
    kwargs: dict[str, object], error: type[Exception], words: str
) -> None:
    args: dict[str, object] = {"type_name": "account", "factory": Counter, **kwargs}
    with pytest.raises(error, match=words):
        Entity(args.pop("type_name"), args.pop("factory"), **args)  # type: ignore[arg-type]


# -- the least-shards strategy -------------------------------------------------

layouts = st.dictionaries(
    st.sampled_from([f"node-{i}" for i in range(8)]),
    st.integers(min_value=0, max_value=60),
    min_size=1,
)


def _layout(counts: dict[str, int]) -> dict[str, set[int]]:
    shards = iter(range(10_000))
    return {
        node: {next(shards) for _ in range(n)} for node, n in sorted(counts.items())
    }


limits = st.builds(
    LeastShardAllocation,
    absolute_limit=st.integers(min_value=1, max_value=30),
    relative_limit=st.floats(min_value=0.01, max_value=1.0),
)


def test_the_default_strategy_is_an_allocation_strategy() -> None:
    assert isinstance(LeastShardAllocation(), AllocationStrategy)


@given(layouts)
def test_a_shard_is_allocated_to_a_node_holding_the_fewest(
    counts: dict[str, int],
) -> None:
    current = _layout(counts)
    chosen = LeastShardAllocation().allocate(10_001, current)
    assert len(current[chosen]) == min(len(s) for s in current.values())


@given(layouts, limits)
def test_a_rebalance_moves_allocated_shards_and_never_more_than_the_limit(
    counts: dict[str, int], strategy: LeastShardAllocation
) -> None:
    current = _layout(counts)
    moved = strategy.rebalance(current, set())
    allocated = set().union(*current.values())
    assert moved <= allocated
    total = len(allocated)
    bound = max(1, min(strategy.absolute_limit, int(strategy.relative_limit * total)))
    assert len(moved) <= bound


@given(layouts)
def test_no_rebalance_starts_while_one_is_in_progress(counts: dict[str, int]) -> None:
    current = _layout(counts)
    some = set().union(*current.values())
    if some:
        assert LeastShardAllocation().rebalance(current, {min(some)}) == set()


@given(layouts, limits)
def test_rebalancing_converges_to_counts_within_one_and_then_moves_nothing(
    counts: dict[str, int], strategy: LeastShardAllocation
) -> None:
    current = _layout(counts)
    total = sum(len(s) for s in current.values())
    for _ in range(total + 1):
        moved = strategy.rebalance(current, set())
        if not moved:
            break
        for shards in current.values():
            shards -= moved
        for shard in sorted(moved):  # each handed off, then allocated again
            current[strategy.allocate(shard, current)].add(shard)
        assert sum(len(s) for s in current.values()) == total  # none lost
    sizes = [len(s) for s in current.values()]
    assert max(sizes) - min(sizes) <= 1
    assert strategy.rebalance(current, set()) == set()


def test_a_joining_node_takes_its_share_a_bounded_number_at_a_time() -> None:
    strategy = LeastShardAllocation(absolute_limit=20, relative_limit=0.1)
    current: dict[str, set[int]] = {
        "a": set(range(500)),
        "b": set(range(500, 1000)),
        "c": set(),
    }
    rounds = 0
    while moved := strategy.rebalance(current, set()):
        assert len(moved) <= 20
        rounds += 1
        for shards in current.values():
            shards -= moved
        for shard in moved:
            current[strategy.allocate(shard, current)].add(shard)
    assert sorted(len(s) for s in current.values()) == [333, 333, 334]
    assert rounds >= 333 // 20


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"absolute_limit": 0}, ValueError),
        ({"absolute_limit": 1.5}, TypeError),
        ({"relative_limit": 0}, ValueError),
        ({"relative_limit": 1.5}, ValueError),
        ({"relative_limit": "x"}, TypeError),
    ],
)
def test_bad_rebalance_limits_are_refused(
    kwargs: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error, match="limit"):
        LeastShardAllocation(**kwargs)  # type: ignore[arg-type]


def test_allocating_with_no_node_names_the_shard() -> None:
    with pytest.raises(ValueError, match="shard 3"):
        LeastShardAllocation().allocate(3, {})
