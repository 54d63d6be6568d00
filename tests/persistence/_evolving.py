"""A wallet whose classes change from one commit to the next: the schema
evolution test recovers, with these classes, a journal that an earlier commit
of this file wrote (``data/wallet_v1.sql``, kept as that commit made it).

    python tests/persistence/_evolving.py OUT.sql

writes a journal with this commit's classes and dumps it as SQL text to
``OUT.sql`` (how ``data/wallet_v1.sql`` was made).
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from actors import ActorSystem
from actors.persistence import (
    Codec,
    Effect,
    EventSourcedActor,
    Snapshots,
    SqliteJournal,
)


@dataclass
class Credited:
    """Version 2: ``currency`` was added (version 1 was in euros)."""

    amount: int
    currency: str


@dataclass
class Renamed:
    """Gained ``reason``, with a default: old events decode as they are."""

    name: str
    reason: str = ""


@dataclass
class Wallet:
    """Version 2: a balance per currency (version 1: one ``balance``)."""

    name: str = ""
    balances: dict[str, int] = field(default_factory=dict)


codec = Codec(Renamed)
codec.register(Credited, version=2)
codec.register(Wallet, version=2)


@codec.adapter("Credited", version=1)
def _credited_in_euros(old: dict[str, Any]) -> dict[str, Any]:
    return {**old, "currency": "EUR"}


@codec.adapter("Wallet", version=1)
def _one_balance_in_euros(old: dict[str, Any]) -> dict[str, Any]:
    balance = old.pop("balance", 0)
    return {**old, "balances": {"EUR": balance} if balance else {}}


class WalletActor(EventSourcedActor[Any, Any, Wallet]):
    codec = codec
    snapshots = Snapshots(every=4, keep=2)

    def __init__(self, name: str) -> None:
        self.persistence_id = f"wallet-{name}"

    def empty_state(self) -> Wallet:
        return Wallet()

    def on_command(self, state: Wallet, command: Any) -> Effect[Any, Wallet]:
        if command == "get":
            return Effect.reply(state)
        return Effect.persist(command).then_reply(lambda s: s)

    def on_event(self, state: Wallet, event: Any) -> Wallet:
        match event:
            case Credited(amount, currency):
                balances = dict(state.balances)
                balances[currency] = balances.get(currency, 0) + amount
                return Wallet(state.name, balances)
            case Renamed(name):
                return Wallet(name, state.balances)
        raise AssertionError(event)


#: What the journal written by ``main`` holds: wallet "a" (a snapshot at 4,
#: events 5-6) and wallet "b" (events only).
HISTORY: dict[str, list[Any]] = {
    "a": [
        Renamed("alice"),
        Credited(10, "EUR"),
        Credited(5, "EUR"),
        Credited(1, "EUR"),
        Credited(2, "EUR"),
        Renamed("al"),
    ],
    "b": [Credited(7, "EUR"), Renamed("bob")],
}


async def write(path: Path) -> None:
    async with SqliteJournal(path) as journal, ActorSystem(journal=journal) as system:
        for name, events in HISTORY.items():
            wallet = system.spawn(WalletActor, name)
            for event in events:
                await wallet.ask(event)


def main(out: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "wallet.db"
        anyio.run(write, path)
        with sqlite3.connect(path) as connection:
            # The timestamps vary from run to run; nothing reads them.
            connection.execute("UPDATE events SET timestamp = 0")
            connection.execute("UPDATE snapshots SET timestamp = 0")
            text = "\n".join(connection.iterdump()) + "\n"
    Path(out).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1])
