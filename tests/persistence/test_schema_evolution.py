"""A journal written by the previous commit's classes (``data/wallet_v1.sql``,
made by that commit's ``_evolving.py``: Credited without a currency, Wallet
with one balance, Renamed without a reason) recovers with this commit's,
through the codec's adapters; new events of the current versions go on in the
same log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from actors import ActorSystem
from actors.persistence import Codec, RecoveryFailed, SqliteJournal

from ._evolving import Credited, Renamed, Wallet, WalletActor, codec

pytestmark = pytest.mark.anyio

DUMP = Path(__file__).with_name("data") / "wallet_v1.sql"


def _load(tmp_path: Path) -> Path:
    path = tmp_path / "wallet.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(DUMP.read_text())
    return path


async def test_a_journal_of_the_previous_classes_recovers_through_the_adapters(
    tmp_path: Path,
) -> None:
    async with SqliteJournal(_load(tmp_path)) as journal:
        async with ActorSystem(journal=journal) as system:
            a = system.spawn(WalletActor, "a")
            b = system.spawn(WalletActor, "b")
            assert await a.ask("get") == Wallet("al", {"EUR": 18})
            assert await b.ask("get") == Wallet("bob", {"EUR": 7})
            await a.ask(Credited(3, "USD"))
            await a.ask(Renamed("alice", reason="back"))
        # Old and new versions side by side in one log.
        manifests = [e.manifest for e in await journal.read_events("wallet-a", 1)]
        assert manifests == [
            "Renamed@1",
            *["Credited@1"] * 4,
            "Renamed@1",
            "Credited@2",
            "Renamed@1",
        ]
        async with ActorSystem(journal=journal) as system:
            a = system.spawn(WalletActor, "a")
            assert await a.ask("get") == Wallet("alice", {"EUR": 18, "USD": 3})


async def test_the_old_snapshot_is_adapted_too(tmp_path: Path) -> None:
    async with SqliteJournal(_load(tmp_path)) as journal:
        snapshot = await journal.latest_snapshot("wallet-a")
    assert snapshot is not None and snapshot.manifest == "Wallet@1"
    assert codec.decode(snapshot.manifest, snapshot.payload) == Wallet(
        "alice", {"EUR": 16}
    )


async def test_without_the_adapter_the_recovery_fails_and_says_so(
    tmp_path: Path,
) -> None:
    bare = Codec(Renamed)
    bare.register(Credited, version=2)
    bare.register(Wallet, version=2)

    class Unadapted(WalletActor):
        codec = bare

    async with (
        SqliteJournal(_load(tmp_path)) as journal,
        ActorSystem(journal=journal, log_failures=False) as system,
    ):
        b = system.spawn(Unadapted, "b", restart="temporary")
        reason = await b.join()
    assert isinstance(reason, RecoveryFailed)
    assert "an adapter of an older version may be missing" in str(reason)
