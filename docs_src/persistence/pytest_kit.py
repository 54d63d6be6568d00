# backends: asyncio
# The tests below use the persistence plugin's fixtures; main() runs pytest on
# this file (as `pytest docs_src/persistence/pytest_kit.py` would).
import sys
from typing import Any

import anyio
import pytest
from _account import Account, Deposit, Deposited, Withdraw

from actors import ActorSystem
from actors.persistence import EventsRejected, MemoryJournal, SqliteJournal


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.anyio
async def test_deposits_are_stored_and_recovered(event_sourced_kit: Any) -> None:
    kit = await event_sourced_kit(Account, "alice")  # on memory_journal
    await kit.run_command(Deposit(10))
    result = await kit.run_command(Withdraw(4))
    assert result.reply == 6
    assert (await kit.restart()).state == result.state
    assert len(kit.events()) == 2


@pytest.mark.anyio
async def test_a_refused_write_leaves_the_state(
    event_sourced_kit: Any, memory_journal: MemoryJournal
) -> None:
    kit = await event_sourced_kit(Account, "bob")
    memory_journal.faults.reject_next_write()
    with pytest.raises(EventsRejected):
        await kit.run_command(Deposit(10))
    assert (await kit.run_command(Deposit(1))).events == [Deposited(1)]


@pytest.mark.anyio
async def test_on_a_real_file(sqlite_journal: SqliteJournal) -> None:
    async with ActorSystem(journal=sqlite_journal) as system:
        assert await system.spawn(Account, "carol").ask(Deposit(7)) == 7
    assert await sqlite_journal.highest_sequence_nr("account-carol") == 1


async def main() -> None:
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-o", "addopts="]
    command += ["-p", "no:cacheprovider"]  # leave no cache beside the file
    result = await anyio.run_process(command, check=False)
    output = result.stdout.decode()
    assert result.returncode == 0, output
    assert "6 passed" in output, output


if __name__ == "__main__":
    anyio.run(main)
