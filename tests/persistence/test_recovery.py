"""Recovery: on every start and restart, the latest snapshot and the events
after it, before the first command; and what makes it fail."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors import ActorSystem, OneForOne
from actors.persistence import (
    JournalError,
    MemoryJournal,
    RecoveryFailed,
    StoredEvent,
    StoredSnapshot,
)
from actors.testing import wait_all_blocked

from ._model import (
    Account,
    Balance,
    BankAccount,
    Deposit,
    DepositMany,
    GatedJournal,
)

pytestmark = pytest.mark.anyio


async def _deposit(journal: MemoryJournal, *amounts: int) -> None:
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        for amount in amounts:
            await account.ask(Deposit(amount))


async def test_a_new_system_on_the_same_journal_recovers_the_state() -> None:
    journal = MemoryJournal()
    await _deposit(journal, 1, 2, 3)
    log: list[Any] = []
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount, "alice", log)
        assert await account.ask(Balance()) == 6
        assert await account.ask(Deposit(4)) == 10
    assert log[0] == ("recovered", 6, 3)
    assert [e.sequence_nr for e in journal.events("account-alice")] == [1, 2, 3, 4]


async def test_commands_sent_during_recovery_are_handled_after_it_in_order() -> None:
    journal = GatedJournal(gate_reads=True)
    journal.gate.set()
    await _deposit(journal, 5)
    journal.gate = anyio.Event()
    log: list[Any] = []
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount, "alice", log)
        answers: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def ask(command: Any) -> None:
                answers.append(await account.ask(command))

            tg.start_soon(ask, Deposit(1))
            await wait_all_blocked()
            account.tell(Deposit(2))
            tg.start_soon(ask, Balance())
            await wait_all_blocked()
            assert journal.waiting == 1 and log == []  # still recovering
            journal.gate.set()
        assert answers == [6, 8]
    assert [entry[0] for entry in log] == ["recovered", "command", "command", "command"]


async def test_a_subclass_on_start_runs_after_recovery() -> None:
    journal = MemoryJournal()
    await _deposit(journal, 9)
    seen: list[Any] = []

    class Starting(BankAccount):
        async def on_start(self) -> None:
            seen.append(("on_start", self.last_sequence_nr))

    async with ActorSystem(journal=journal) as system:
        account = system.spawn(Starting)
        assert await account.ask(Balance()) == 9
    assert seen == [("on_start", 1)]


class Flaky(BankAccount):
    """Fails on the command "boom" (after a deposit, to have state)."""

    def on_command(self, state: Account, command: Any) -> Any:
        if command == "boom":
            raise RuntimeError("boom")
        return super().on_command(state, command)


async def test_a_supervisor_restart_recovers_again() -> None:
    journal = MemoryJournal()
    log: list[Any] = []
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(Flaky, "alice", log)
        await account.ask(Deposit(3))
        with pytest.raises(RuntimeError):
            await account.ask("boom")
        assert await account.ask(Balance()) == 3
        assert system.restarts == 1
    assert [entry for entry in log if entry[0] == "recovered"] == [
        ("recovered", 0, 0),
        ("recovered", 3, 1),
    ]


async def test_an_on_restart_that_does_not_call_on_start_still_recovers() -> None:
    journal = MemoryJournal()
    restarts: list[Any] = []

    class OwnRestart(Flaky):
        def on_restart(self, exc: BaseException | None) -> None:
            restarts.append((type(exc).__name__, self.last_sequence_nr))

    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(OwnRestart)
        await account.ask(Deposit(2))
        with pytest.raises(RuntimeError):
            await account.ask("boom")
        assert await account.ask(Balance()) == 2
    assert restarts == [("RuntimeError", 1)]


async def test_a_failed_read_fails_the_recovery_and_calls_the_hook() -> None:
    journal = MemoryJournal()
    journal.faults.fail_next_read()
    failures: list[BaseException] = []

    class Hooked(BankAccount):
        def on_recovery_failed(self, error: BaseException) -> None:
            failures.append(error)

    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(Hooked, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert isinstance(reason.__cause__, JournalError)
    assert failures == [reason.__cause__]


async def test_a_recovery_failure_restarts_under_the_strategy_and_then_recovers() -> (
    None
):
    journal = MemoryJournal()
    await _deposit(journal, 4)
    journal.faults.fail_next_read(count=2)
    async with ActorSystem(
        journal=journal, log_failures=False, strategy=OneForOne(max_restarts=5)
    ) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Balance()) == 4
        assert system.restarts == 2


async def test_an_event_handler_failing_during_replay_fails_the_recovery() -> None:
    journal = MemoryJournal()
    await _deposit(journal, 1)

    class Broken(BankAccount):
        def on_event(self, state: Account, event: Any) -> Account:
            raise ValueError("cannot apply")

    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(Broken, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert isinstance(reason.__cause__, ValueError)


async def test_on_recovery_completed_raising_fails_the_recovery() -> None:
    class Sulky(BankAccount):
        def on_recovery_completed(self, state: Account) -> None:
            raise LookupError("no")

    async with ActorSystem(journal=MemoryJournal(), log_failures=False) as system:
        account = system.spawn(Sulky, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert isinstance(reason.__cause__, LookupError)


async def test_recovery_that_takes_too_long_fails() -> None:
    journal = MemoryJournal()
    journal.faults.read_delay = 60.0

    class Impatient(BankAccount):
        recovery_timeout = 0.05

    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(Impatient, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert "recovery_timeout" in str(reason)


async def test_recovery_reads_the_events_in_pages() -> None:
    journal = MemoryJournal()
    await _deposit(journal, 1, 1, 1, 1, 1)

    class Paged(BankAccount):
        replay_batch = 2

    async with ActorSystem(journal=journal) as system:
        account = system.spawn(Paged)
        assert await account.ask(Balance()) == 5
    # One read for the first system (nothing stored), then pages of 2, 2, 1.
    assert journal.calls["read_events"] == 1 + 3


class _Doctored(MemoryJournal):
    """Returns the events it was told to, whatever is stored."""

    def __init__(self, replay: list[int], highest: int) -> None:
        super().__init__()
        self.numbers = replay
        self.highest = highest

    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        found = [
            StoredEvent(
                persistence_id, n, "Deposited@1", b"\x81\xa6amount\x01", "w", 0.0
            )
            for n in self.numbers
            if n >= from_sequence_nr
        ]
        return found[:limit]

    async def highest_sequence_nr(self, persistence_id: str) -> int:
        return self.highest


@pytest.mark.parametrize(
    ("replay", "highest", "match"),
    [
        ([1, 2, 4], 4, "gap or repeat"),
        ([1, 1], 1, "gap or repeat"),
        ([3, 4], 4, "events 1 to 2 are deleted"),
        ([], 7, "events 1 to 7 are deleted"),
    ],
)
async def test_a_log_with_a_gap_or_deleted_events_fails_the_recovery(
    replay: list[int], highest: int, match: str
) -> None:
    journal = _Doctored(replay, highest)
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(BankAccount, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert match in str(reason.__cause__)


async def test_a_journal_behind_its_snapshot_fails_the_recovery() -> None:
    journal = _Doctored([], 2)
    codec = BankAccount.codec
    assert codec is not None
    manifest, payload = codec.encode(Account(5))
    await journal.save_snapshot(
        StoredSnapshot("account-alice", 3, manifest, payload, 0)
    )
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(BankAccount, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert "lost events" in str(reason.__cause__)


async def test_an_event_of_an_unknown_type_fails_the_recovery() -> None:
    journal = MemoryJournal()
    await journal.append(
        "account-alice", [StoredEvent("account-alice", 1, "Gone@1", b"\xc0", "w", 0)], 0
    )
    async with ActorSystem(journal=journal, log_failures=False) as system:
        account = system.spawn(BankAccount, restart="temporary")
        reason = await account.join()
    assert isinstance(reason, RecoveryFailed)
    assert "Gone@1" in str(reason)


async def test_recovery_with_many_events_rebuilds_the_same_state_as_live() -> None:
    journal = MemoryJournal()
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        for n in range(50):
            await account.ask(DepositMany([n, 1]))
        live = await account.ask(Balance())
    async with ActorSystem(journal=journal) as system:
        account = system.spawn(BankAccount)
        assert await account.ask(Balance()) == live == sum(range(50)) + 50
