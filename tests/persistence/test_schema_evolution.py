"""A journal written by an earlier commit's classes (``data/wallet_v1.sql``,
made by that commit's ``_evolving.py``) recovers with this commit's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from actors import ActorSystem
from actors.persistence import SqliteJournal

from ._evolving import Wallet, WalletActor

pytestmark = pytest.mark.anyio

DUMP = Path(__file__).with_name("data") / "wallet_v1.sql"


def _load(tmp_path: Path) -> Path:
    path = tmp_path / "wallet.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(DUMP.read_text())
    return path


async def test_a_journal_of_the_previous_classes_recovers(tmp_path: Path) -> None:
    async with SqliteJournal(_load(tmp_path)) as journal:
        async with ActorSystem(journal=journal) as system:
            a = system.spawn(WalletActor, "a")
            b = system.spawn(WalletActor, "b")
            assert await a.ask("get") == Wallet("al", 18)
            assert await b.ask("get") == Wallet("bob", 7)
