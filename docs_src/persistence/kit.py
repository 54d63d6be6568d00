"""The event-sourced test kit: run commands, see their events, state and
reply, restart, inject a write failure."""

import anyio
from _account import Account, Balance, Deposit, Deposited, InsufficientFunds, Withdraw

from actors import ActorSystem
from actors.persistence import JournalError
from actors.persistence.testing import EventSourcedTestKit


async def main() -> None:
    async with (
        ActorSystem(log_failures=False) as system,
        EventSourcedTestKit(system, Account, "alice") as kit,  # a MemoryJournal
    ):
        result = await kit.run_command(Deposit(30))
        print(f"events {result.events}, state {result.state}, reply {result.reply}")
        assert result.events == [Deposited(30)] and result.state == Balance(30)

        try:
            await kit.run_command(Withdraw(100))
        except InsufficientFunds:
            print(f"withdraw 100: refused; the events stored: {kit.events()}")

        kit.journal.faults.fail_next_write()  # the next append fails
        try:
            await kit.run_command(Deposit(5))
        except JournalError as exc:
            print(f"deposit 5: {exc}")
        restarted = await kit.restart()  # a new instance, the same journal
        print(f"after a restart: {restarted.state}, at event {restarted.sequence_nr}")
        assert restarted.state == result.state


if __name__ == "__main__":
    anyio.run(main)
