"""Snapshots: every N events or by a predicate, retention of the latest K,
optional deletion of the events they cover, and recovery from them."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from actors import ActorSystem
from actors.persistence import (
    Codec,
    Journal,
    MemoryJournal,
    Snapshots,
    StoredSnapshot,
)

from ._model import Account, Balance, BankAccount, Deposit, Deposited, DepositMany

pytestmark = pytest.mark.anyio


def _account(policy: Snapshots[Any, Any]) -> type[BankAccount]:
    class Snapshotting(BankAccount):
        snapshots = policy

    return Snapshotting


async def _run(journal: MemoryJournal, cls: type[BankAccount], *commands: Any) -> Any:
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(cls)
        for command in commands:
            await account.ask(command)
        return await account.ask(Balance())


def _numbers(journal: MemoryJournal) -> list[int]:
    return [s.sequence_nr for s in journal.snapshots("account-alice")]


async def test_a_snapshot_is_taken_every_n_events() -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=3, keep=10))
    await _run(journal, cls, *[Deposit(1)] * 7)
    assert _numbers(journal) == [3, 6]
    latest = journal.snapshots("account-alice")[-1]
    assert latest.manifest == "Account@1"
    assert BankAccount.codec is not None
    assert BankAccount.codec.decode(latest.manifest, latest.payload) == Account(
        6, [1] * 6
    )


async def test_a_persist_of_several_events_snapshots_once_after_all_of_them() -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=3, keep=10))
    await _run(journal, cls, DepositMany([1, 1]), DepositMany([1, 1]))
    assert _numbers(journal) == [4]  # event 3 was in the second persist


async def test_a_predicate_decides_on_the_state_and_event_after_each_event() -> None:
    journal = MemoryJournal()
    seen: list[tuple[int, int, int]] = []

    def big(state: Account, event: Deposited, seq: int) -> bool:
        seen.append((state.balance, event.amount, seq))
        return event.amount >= 100

    cls = _account(Snapshots(when=big, keep=10))
    await _run(journal, cls, Deposit(1), DepositMany([100, 2]), Deposit(3))
    assert _numbers(journal) == [3]
    # Checked event by event until one calls for a snapshot (as Akka's
    # persistAll): the 2 after the 100 is not asked about.
    assert seen == [(1, 1, 1), (101, 100, 2), (106, 3, 4)]


async def test_only_the_latest_snapshots_are_kept() -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=2, keep=2))
    await _run(journal, cls, *[Deposit(1)] * 9)
    assert _numbers(journal) == [6, 8]
    assert len(journal.events("account-alice")) == 9  # events stay


async def test_events_up_to_the_oldest_kept_snapshot_can_be_deleted() -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=2, keep=2, delete_events=True))
    assert await _run(journal, cls, *[Deposit(1)] * 9) == 9
    assert _numbers(journal) == [6, 8]
    assert [e.sequence_nr for e in journal.events("account-alice")] == [7, 8, 9]
    assert await _run(journal, cls, Deposit(1)) == 10


async def test_keep_one_with_deleting_events_deletes_up_to_the_snapshot() -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=4, delete_events=True))
    assert await _run(journal, cls, *[Deposit(2)] * 8) == 16
    assert _numbers(journal) == [8]
    assert journal.events("account-alice") == []
    assert await journal.highest_sequence_nr("account-alice") == 8
    assert await _run(journal, cls, Deposit(1)) == 17


async def test_recovery_starts_from_the_latest_snapshot() -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=5, keep=3))
    await _run(journal, cls, *[Deposit(1)] * 12)
    applied: list[int] = []

    class Counting(cls):  # type: ignore[valid-type,misc]
        def on_event(self, state: Account, event: Any) -> Account:
            applied.append(event.amount)
            return super().on_event(state, event)

    log: list[Any] = []
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(Counting, "alice", log)
        assert await account.ask(Balance()) == 12
    assert applied == [1, 1]  # events 11 and 12, after the snapshot at 10
    assert log[0] == ("recovered", 12, 12)


async def test_a_snapshot_that_does_not_decode_falls_back_to_an_older_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal = MemoryJournal()
    cls = _account(Snapshots(every=2, keep=3))
    await _run(journal, cls, *[Deposit(1)] * 5)
    await journal.save_snapshot(
        StoredSnapshot("account-alice", 4, "Account@1", b"?", 0)
    )
    with caplog.at_level(logging.WARNING, "actors.persistence"):
        assert await _run(journal, cls) == 5
    assert "cannot be used" in caplog.text


async def test_a_failed_snapshot_is_logged_and_the_actor_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal = MemoryJournal()
    journal.faults.fail_next_snapshot()
    cls = _account(Snapshots(every=2))
    with caplog.at_level(logging.WARNING, "actors.persistence"):
        assert await _run(journal, cls, *[Deposit(1)] * 5) == 5
    assert "snapshot at 2 failed" in caplog.text
    assert _numbers(journal) == [4]
    assert len(journal.events("account-alice")) == 5


async def test_a_state_the_codec_cannot_encode_skips_the_snapshot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Unregistered(BankAccount):
        codec = Codec(Deposited)  # the state's class is missing
        snapshots = Snapshots(every=1)

    journal = MemoryJournal()
    with caplog.at_level(logging.WARNING, "actors.persistence"):
        assert await _run(journal, Unregistered, Deposit(1)) == 1
    assert "not registered" in caplog.text
    assert journal.snapshots("account-alice") == []


async def test_snapshots_need_a_snapshot_store() -> None:
    class Plain(BankAccount):
        snapshots = Snapshots(every=1)

    class OnlyJournal(Journal):
        def __init__(self) -> None:
            self.inner = MemoryJournal()

        async def append(self, *args: Any) -> None:
            await self.inner.append(*args)

        async def read_events(self, *args: Any) -> Any:
            return await self.inner.read_events(*args)

        async def highest_sequence_nr(self, persistence_id: str) -> int:
            return await self.inner.highest_sequence_nr(persistence_id)

        async def delete_events(self, *args: Any) -> None:
            await self.inner.delete_events(*args)

    async with ActorSystem(journal=OnlyJournal(), log_failures=False) as system:
        # Found as the instance is built: spawn raises, nothing starts.
        with pytest.raises(TypeError, match="SnapshotStore"):
            system.spawn(Plain)
        assert system.dead_letters.count == 0
        # Without a snapshot rule, a journal alone is enough.
        other = system.spawn(BankAccount, "bob")
        assert await other.ask(Deposit(2)) == 2


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({}, ValueError),
        ({"every": 0}, ValueError),
        ({"every": 1, "keep": 0}, ValueError),
        ({"every": 1.5}, TypeError),
        ({"every": True}, TypeError),
        ({"when": 3}, TypeError),
        ({"every": 1, "delete_events": 1}, TypeError),
    ],
)
def test_a_bad_snapshot_rule_is_refused(
    arguments: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        Snapshots(**arguments)


def test_snapshots_must_be_a_snapshot_rule() -> None:
    with pytest.raises(TypeError, match="Snapshots"):

        class Wrong(BankAccount):
            snapshots = 5  # type: ignore[assignment]
