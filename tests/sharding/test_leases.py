"""The placement store's contract (every store runs it: the memory one here,
a JetStream KV bucket when it drops in) and the shard leases built on it, on a
manual clock: a holder cut off from the store gives its lease up before the
lease can expire, and nobody else gets it before it has expired."""

from __future__ import annotations

import anyio
import pytest

from actors.sharding import (
    MemoryPlacementStore,
    PlacementConflict,
    PlacementStore,
    PlacementUnavailable,
)
from actors.sharding.lowlevel import Leases
from actors.testing import ManualClock

pytestmark = pytest.mark.anyio


def _store(clock: ManualClock, ttl: float | None = 10.0) -> MemoryPlacementStore:
    return MemoryPlacementStore(ttl, clock=clock)


# -- the store's contract ------------------------------------------------------


async def test_the_memory_store_is_a_placement_store() -> None:
    assert isinstance(MemoryPlacementStore(), PlacementStore)


async def test_create_stores_only_when_the_key_is_absent() -> None:
    store = _store(ManualClock())
    revision = await store.create("a", b"1")
    assert revision > 0
    with pytest.raises(PlacementConflict) as caught:
        await store.create("a", b"2")
    assert (caught.value.expected, caught.value.actual) == (0, revision)
    entry = await store.get("a")
    assert entry is not None and (entry.value, entry.revision) == (b"1", revision)


async def test_update_is_a_compare_and_set_on_the_revision() -> None:
    store = _store(ManualClock())
    first = await store.create("a", b"1")
    second = await store.update("a", b"2", first)
    assert second > first
    with pytest.raises(PlacementConflict, match="another writer"):
        await store.update("a", b"3", first)
    with pytest.raises(PlacementConflict):
        await store.update("absent", b"3", 0)
    entry = await store.get("a")
    assert entry is not None and entry.value == b"2"


async def test_delete_with_a_revision_deletes_only_that_revision() -> None:
    store = _store(ManualClock())
    first = await store.create("a", b"1")
    with pytest.raises(PlacementConflict):
        await store.delete("a", first + 100)
    await store.delete("a", first)
    assert await store.get("a") is None
    await store.delete("a")  # absent, no revision: nothing happens
    assert await store.create("a", b"again") > first


async def test_list_gives_the_live_entries_under_a_prefix_in_key_order() -> None:
    clock = ManualClock()
    store = _store(clock)
    await store.create("shards/t/2", b"n")
    await store.create("shards/t/1", b"n")
    await store.create("members/x", b"m")
    await clock.advance(5)
    await store.create("shards/t/3", b"n")
    assert [e.key for e in await store.list("shards/")] == [
        "shards/t/1",
        "shards/t/2",
        "shards/t/3",
    ]
    await clock.advance(5)  # the first three expire
    assert [e.key for e in await store.list("")] == ["shards/t/3"]


async def test_an_entry_expires_its_ttl_after_its_last_write() -> None:
    clock = ManualClock()
    store = _store(clock, ttl=10)
    revision = await store.create("a", b"1")
    await clock.advance(9)
    revision = await store.update("a", b"1", revision)  # lives 10 s from now
    await clock.advance(9.9)
    assert await store.get("a") is not None
    await clock.advance(0.1)
    assert await store.get("a") is None
    with pytest.raises(PlacementConflict):
        await store.update("a", b"1", revision)


async def test_entries_of_a_store_without_ttl_never_expire() -> None:
    clock = ManualClock()
    store = _store(clock, ttl=None)
    await store.create("a", b"1")
    await clock.advance(1e9)
    assert await store.get("a") is not None


async def test_a_connection_cut_off_raises_while_the_others_go_on() -> None:
    clock = ManualClock()
    one = _store(clock)
    other = one.connect()
    await one.create("a", b"1")
    one.unavailable = True
    with pytest.raises(PlacementUnavailable):
        await one.get("a")
    entry = await other.get("a")
    assert entry is not None and entry.value == b"1"


@pytest.mark.parametrize(
    ("ttl", "error"), [(0, ValueError), (float("nan"), ValueError), ("1", TypeError)]
)
async def test_a_bad_ttl_is_refused(ttl: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="ttl"):
        MemoryPlacementStore(ttl)  # type: ignore[arg-type]


async def test_values_are_bytes() -> None:
    with pytest.raises(TypeError, match="bytes"):
        await MemoryPlacementStore().create("a", "text")  # type: ignore[arg-type]


# -- leases --------------------------------------------------------------------


def _leases(store: MemoryPlacementStore, node: str, clock: ManualClock) -> Leases:
    return Leases(store, "account", node, clock.now, margin=2.5)


async def test_one_node_holds_a_shard_and_the_other_is_refused() -> None:
    clock = ManualClock()
    store = _store(clock)
    a = _leases(store, "a", clock)
    b = _leases(store.connect(), "b", clock)
    assert await a.acquire(7)
    assert not await b.acquire(7)
    assert await b.owner(7) == "a"
    assert a.held == [7] and b.held == []
    assert a.valid_until(7) == 10 - 2.5


async def test_a_renewed_lease_is_kept_for_as_long_as_its_holder_renews() -> None:
    clock = ManualClock()
    store = _store(clock)
    a = _leases(store, "a", clock)
    b = _leases(store.connect(), "b", clock)
    assert await a.acquire(1)
    for _ in range(20):
        await clock.advance(2.5)
        assert await a.renew() == []
        assert a.expiring() == []
        assert not await b.acquire(1)
    assert a.valid_until(1) == clock.now() + 7.5


async def test_a_holder_cut_off_gives_its_lease_up_before_anyone_else_can_take_it() -> (
    None
):
    # The ownership guarantee: the holder's last moment of ownership (7.5 s)
    # comes before the first moment another node can own the shard (10 s).
    clock = ManualClock()
    store = _store(clock)
    cut = store.connect()
    a = _leases(cut, "a", clock)
    b = _leases(store.connect(), "b", clock)
    assert await a.acquire(3)
    cut.unavailable = True
    given_up_at = taken_at = None
    while taken_at is None:
        await clock.advance(0.5)
        assert await a.renew() == []  # unanswered, not lost for certain
        if given_up_at is None and a.expiring() == [3]:
            given_up_at = clock.now()
            assert not a.holds(3)
        if await b.acquire(3):
            taken_at = clock.now()
    assert given_up_at == 7.5
    assert taken_at == 10.0
    cut.unavailable = False
    assert not await a.acquire(3)  # it is b's now
    assert await a.renew() == []


async def test_a_lease_taken_over_is_lost_for_certain_at_the_next_renewal() -> None:
    clock = ManualClock()
    store = _store(clock)
    a = _leases(store, "a", clock)
    b = _leases(store.connect(), "b", clock)
    assert await a.acquire(3)
    await clock.advance(10)  # a slept through its whole lease (SIGSTOP)
    assert await b.acquire(3)
    assert await a.renew() == [3]
    assert not a.holds(3)


async def test_a_released_lease_is_free_at_once() -> None:
    clock = ManualClock()
    store = _store(clock)
    a = _leases(store, "a", clock)
    b = _leases(store.connect(), "b", clock)
    assert await a.acquire(3)
    assert await a.release(3)
    assert await b.acquire(3)
    assert not await a.release(3)


async def test_a_release_during_a_renewal_still_gives_the_lease_back() -> None:
    # The renewal's write lands first (a new revision), so the release's
    # delete of the old one fails: the renewal must give the new one back.
    clock = ManualClock()
    store = _store(clock)
    a = _leases(store, "a", clock)
    assert await a.acquire(3)
    async with anyio.create_task_group() as tg:
        tg.start_soon(a.renew)
        tg.start_soon(a.release, 3)
    assert await store.get("shards/account/3") is None
    assert not a.holds(3)


async def test_a_lost_create_answer_is_recognised_as_the_nodes_own_lease() -> None:
    clock = ManualClock()
    store = _store(clock)
    await store.create("shards/account/3", b"a")  # the answer never came back
    a = _leases(store, "a", clock)
    assert await a.acquire(3)
    assert a.holds(3)


async def test_leases_need_a_store_whose_entries_expire() -> None:
    clock = ManualClock()
    with pytest.raises(ValueError, match="expire"):
        _leases(_store(clock, ttl=None), "a", clock)
    with pytest.raises(ValueError, match="margin"):
        Leases(_store(clock), "t", "a", clock.now, margin=10)
