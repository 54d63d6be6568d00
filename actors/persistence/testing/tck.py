"""The contract every journal plugin keeps (Akka's persistence TCK): pytest
test classes to subclass in a plugin's own tests, giving the store as the
``store`` fixture::

    import pytest

    from actors.persistence.testing.tck import (
        DurableStateStoreContract,
        JournalContract,
        SnapshotStoreContract,
    )


    class TestMyJournal(JournalContract, SnapshotStoreContract):
        @pytest.fixture
        async def store(self, tmp_path):
            async with MyJournal(tmp_path / "j") as journal:
                yield journal

Each test is an async test of anyio's plugin (``@pytest.mark.anyio``), on the
backends the project's ``anyio_backend`` fixture gives. This module imports
pytest: import it from tests only.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from .._errors import JournalClosed, RevisionConflict, SequenceConflict
from .._records import StoredEvent, StoredSnapshot

__all__ = ["DurableStateStoreContract", "JournalContract", "SnapshotStoreContract"]


def events(
    persistence_id: str, first: int, count: int, writer: str = "w"
) -> list[StoredEvent]:
    """``count`` events of ``persistence_id`` numbered from ``first``; the
    payload of event ``n`` is ``b"event n"``."""
    return [
        StoredEvent(persistence_id, n, "e@1", f"event {n}".encode(), writer, 1000.0 + n)
        for n in range(first, first + count)
    ]


def numbers(found: list[StoredEvent]) -> list[int]:
    return [event.sequence_nr for event in found]


def snapshot(persistence_id: str, seq: int, payload: bytes = b"") -> StoredSnapshot:
    return StoredSnapshot(
        persistence_id, seq, "s@1", payload or f"at {seq}".encode(), 5.0
    )


@pytest.mark.anyio
class JournalContract:
    """The rules of ``Journal`` (see ``actors.persistence.Journal``)."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("define the store fixture (the journal under test)")

    async def test_appended_events_come_back_as_stored(self, store: Any) -> None:
        written = events("p", 1, 3)
        await store.append("p", written[:1], 0)
        await store.append("p", written[1:], 1)
        assert await store.read_events("p", 1) == written
        assert await store.highest_sequence_nr("p") == 3

    async def test_bytes_are_kept_byte_for_byte(self, store: Any) -> None:
        odd = StoredEvent("p", 1, "tag-ü@3", bytes(range(256)) * 4, "wr1te", 12.5)
        await store.append("p", [odd], 0)
        assert await store.read_events("p", 1) == [odd]

    async def test_replay_gives_the_numbers_manifests_and_payloads(
        self, store: Any
    ) -> None:
        written = events("p", 1, 5)
        await store.append("p", written, 0)
        await store.delete_events("p", 1)
        expected = [(e.sequence_nr, e.manifest, e.payload) for e in written[1:]]
        assert list(await store.replay("p", 1, 100)) == expected
        assert list(await store.replay("p", 3, 2)) == expected[1:3]
        assert list(await store.replay("p", 6, 10)) == []
        assert list(await store.replay("nobody", 1, 10)) == []

    async def test_an_unknown_persistence_id_has_nothing(self, store: Any) -> None:
        assert await store.read_events("nobody", 1) == []
        assert await store.highest_sequence_nr("nobody") == 0

    async def test_reads_take_bounds_and_a_limit(self, store: Any) -> None:
        await store.append("p", events("p", 1, 10), 0)
        assert numbers(await store.read_events("p", 4)) == list(range(4, 11))
        assert numbers(await store.read_events("p", 4, 6)) == [4, 5, 6]
        assert numbers(await store.read_events("p", 4, None, 2)) == [4, 5]
        assert numbers(await store.read_events("p", 4, 8, 10)) == [4, 5, 6, 7, 8]
        assert numbers(await store.read_events("p", 5, 5)) == [5]
        assert await store.read_events("p", 4, None, 0) == []
        assert await store.read_events("p", 7, 6) == []
        assert await store.read_events("p", 11) == []
        assert numbers(await store.read_events("p", 0, 2)) == [1, 2]

    async def test_an_append_expecting_another_highest_number_stores_nothing(
        self, store: Any
    ) -> None:
        await store.append("p", events("p", 1, 2), 0)
        for expected in (0, 1, 3):
            batch = events("p", expected + 1, 2, writer="stale")
            with pytest.raises(SequenceConflict) as caught:
                await store.append("p", batch, expected)
            assert caught.value.expected == expected
            assert caught.value.actual in (2, None)
        assert [e.writer for e in await store.read_events("p", 1)] == ["w", "w"]
        assert await store.highest_sequence_nr("p") == 2

    async def test_an_append_is_all_or_nothing(self, store: Any) -> None:
        await store.append("p", events("p", 1, 1), 0)
        # Events 2-4 expect 1 as the highest; a second writer stored 2 first.
        await store.append("p", events("p", 2, 1, writer="other"), 1)
        with pytest.raises(SequenceConflict):
            await store.append("p", events("p", 2, 3), 1)
        assert numbers(await store.read_events("p", 1)) == [1, 2]
        assert await store.highest_sequence_nr("p") == 2

    async def test_of_concurrent_appends_expecting_the_same_number_one_wins(
        self, store: Any
    ) -> None:
        outcomes: dict[str, str] = {}

        async def write(writer: str) -> None:
            try:
                await store.append("p", events("p", 1, 2, writer=writer), 0)
            except SequenceConflict:
                outcomes[writer] = "conflict"
            else:
                outcomes[writer] = "stored"

        async with anyio.create_task_group() as tg:
            for writer in ("a", "b", "c", "d"):
                tg.start_soon(write, writer)
        assert sorted(outcomes.values()) == ["conflict"] * 3 + ["stored"]
        winner = next(w for w, outcome in outcomes.items() if outcome == "stored")
        stored = await store.read_events("p", 1)
        assert numbers(stored) == [1, 2]
        assert {event.writer for event in stored} == {winner}

    async def test_concurrent_appends_of_many_ids_are_all_stored(
        self, store: Any
    ) -> None:
        async def write(index: int) -> None:
            persistence_id = f"p-{index}"
            for n in range(1, 6):
                await store.append(persistence_id, events(persistence_id, n, 1), n - 1)

        async with anyio.create_task_group() as tg:
            for index in range(40):
                tg.start_soon(write, index)
        for index in range(40):
            found = await store.read_events(f"p-{index}", 1)
            assert numbers(found) == [1, 2, 3, 4, 5]

    async def test_persistence_ids_are_independent(self, store: Any) -> None:
        await store.append("a", events("a", 1, 3), 0)
        await store.append("b", events("b", 1, 1), 0)
        assert numbers(await store.read_events("a", 1)) == [1, 2, 3]
        assert numbers(await store.read_events("b", 1)) == [1]
        await store.delete_events("a", 3)
        assert numbers(await store.read_events("b", 1)) == [1]

    async def test_deleting_a_prefix_leaves_the_rest(self, store: Any) -> None:
        await store.append("p", events("p", 1, 5), 0)
        await store.delete_events("p", 3)
        assert numbers(await store.read_events("p", 1)) == [4, 5]
        assert numbers(await store.read_events("p", 3, 4)) == [4]
        assert await store.highest_sequence_nr("p") == 5

    async def test_deleting_every_event_keeps_the_highest_number(
        self, store: Any
    ) -> None:
        await store.append("p", events("p", 1, 4), 0)
        await store.delete_events("p", 100)
        assert await store.read_events("p", 1) == []
        assert await store.highest_sequence_nr("p") == 4
        with pytest.raises(SequenceConflict):
            await store.append("p", events("p", 1, 1), 0)
        await store.append("p", events("p", 5, 1), 4)
        assert numbers(await store.read_events("p", 1)) == [5]
        assert await store.highest_sequence_nr("p") == 5

    async def test_deleting_nothing_or_twice_is_harmless(self, store: Any) -> None:
        await store.delete_events("nobody", 10)
        await store.append("p", events("p", 1, 3), 0)
        await store.delete_events("p", 0)
        await store.delete_events("p", 2)
        await store.delete_events("p", 1)
        assert numbers(await store.read_events("p", 1)) == [3]
        assert await store.highest_sequence_nr("p") == 3

    async def test_bad_appends_are_refused_before_anything_is_stored(
        self, store: Any
    ) -> None:
        with pytest.raises(ValueError):
            await store.append("p", [], 0)
        with pytest.raises(ValueError):
            await store.append("p", events("p", 2, 1), 0)  # not expected + 1
        with pytest.raises(ValueError):
            await store.append("p", [*events("p", 1, 1), *events("p", 3, 1)], 0)
        with pytest.raises(ValueError):
            await store.append("p", events("q", 1, 1), 0)
        with pytest.raises(ValueError):
            await store.append("", events("", 1, 1), 0)
        with pytest.raises(TypeError):
            await store.append("p", events("p", 1, 1), "0")
        assert await store.highest_sequence_nr("p") == 0

    async def test_a_closed_journal_refuses_operations(self, store: Any) -> None:
        await store.append("p", events("p", 1, 1), 0)
        await store.aclose()
        await store.aclose()  # twice: nothing more
        with pytest.raises(JournalClosed):
            await store.append("p", events("p", 2, 1), 1)
        with pytest.raises(JournalClosed):
            await store.read_events("p", 1)


@pytest.mark.anyio
class SnapshotStoreContract:
    """The rules of ``SnapshotStore``."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("define the store fixture (the store under test)")

    async def test_no_snapshot_is_none(self, store: Any) -> None:
        assert await store.latest_snapshot("nobody") is None

    async def test_the_latest_snapshot_at_or_below_a_bound(self, store: Any) -> None:
        for seq in (10, 30, 20):
            await store.save_snapshot(snapshot("p", seq))
        assert await store.latest_snapshot("p") == snapshot("p", 30)
        assert await store.latest_snapshot("p", 29) == snapshot("p", 20)
        assert await store.latest_snapshot("p", 20) == snapshot("p", 20)
        assert await store.latest_snapshot("p", 9) is None

    async def test_a_snapshot_of_the_same_number_replaces_the_old(
        self, store: Any
    ) -> None:
        await store.save_snapshot(snapshot("p", 5, b"old"))
        await store.save_snapshot(snapshot("p", 5, b"new"))
        latest = await store.latest_snapshot("p")
        assert latest is not None and latest.payload == b"new"

    async def test_deleting_snapshots_up_to_a_number(self, store: Any) -> None:
        for seq in (10, 20, 30):
            await store.save_snapshot(snapshot("p", seq))
        await store.save_snapshot(snapshot("q", 10))
        await store.delete_snapshots("p", 20)
        assert await store.latest_snapshot("p", 25) is None
        assert await store.latest_snapshot("p") == snapshot("p", 30)
        assert await store.latest_snapshot("q") == snapshot("q", 10)
        await store.delete_snapshots("nobody", 5)


@pytest.mark.anyio
class DurableStateStoreContract:
    """The rules of ``DurableStateStore``."""

    @pytest.fixture
    def store(self) -> Any:
        raise NotImplementedError("define the store fixture (the store under test)")

    async def test_no_state_is_none(self, store: Any) -> None:
        assert await store.get_state("nobody") is None

    async def test_a_state_is_created_then_updated_by_revision(
        self, store: Any
    ) -> None:
        first = await store.put_state("p", "s@1", b"one", 0)
        assert first > 0
        stored = await store.get_state("p")
        assert stored is not None
        assert (stored.revision, stored.manifest, stored.payload) == (
            first,
            "s@1",
            b"one",
        )
        second = await store.put_state("p", "s@1", b"two", first)
        assert second != first
        stored = await store.get_state("p")
        assert stored is not None and (stored.revision, stored.payload) == (
            second,
            b"two",
        )

    async def test_a_write_with_a_stale_revision_changes_nothing(
        self, store: Any
    ) -> None:
        first = await store.put_state("p", "s@1", b"one", 0)
        second = await store.put_state("p", "s@1", b"two", first)
        for stale in (0, first, second + 1000):
            with pytest.raises(RevisionConflict) as caught:
                await store.put_state("p", "s@1", b"stale", stale)
            assert caught.value.actual in (second, None)
            with pytest.raises(RevisionConflict):
                await store.delete_state("p", stale)
        stored = await store.get_state("p")
        assert stored is not None and stored.payload == b"two"

    async def test_a_deleted_state_is_gone_and_its_revisions_are_not_reused(
        self, store: Any
    ) -> None:
        revisions = [await store.put_state("p", "s@1", b"one", 0)]
        revisions.append(await store.put_state("p", "s@1", b"two", revisions[-1]))
        await store.delete_state("p", revisions[-1])
        assert await store.get_state("p") is None
        with pytest.raises(RevisionConflict):
            await store.put_state("p", "s@1", b"stale", revisions[-1])
        again = await store.put_state("p", "s@1", b"again", 0)
        assert again not in revisions
        stored = await store.get_state("p")
        assert stored is not None and (stored.revision, stored.payload) == (
            again,
            b"again",
        )

    async def test_of_concurrent_writes_expecting_one_revision_one_wins(
        self, store: Any
    ) -> None:
        won: list[bytes] = []

        async def write(payload: bytes) -> None:
            try:
                await store.put_state("p", "s@1", payload, 0)
            except RevisionConflict:
                return
            won.append(payload)

        async with anyio.create_task_group() as tg:
            for payload in (b"a", b"b", b"c"):
                tg.start_soon(write, payload)
        assert len(won) == 1
        stored = await store.get_state("p")
        assert stored is not None and stored.payload == won[0]

    async def test_states_of_other_ids_are_independent(self, store: Any) -> None:
        await store.put_state("a", "s@1", b"a", 0)
        revision = await store.put_state("b", "s@1", b"b", 0)
        await store.delete_state("b", revision)
        stored = await store.get_state("a")
        assert stored is not None and stored.payload == b"a"
