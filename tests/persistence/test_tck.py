"""The journals run the contract every journal plugin keeps
(actors.persistence.testing.tck)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actors.persistence import MemoryJournal, SqliteJournal
from actors.persistence.testing.tck import (
    DurableStateStoreContract,
    JournalContract,
    SnapshotStoreContract,
)


class TestMemoryJournal(
    JournalContract, SnapshotStoreContract, DurableStateStoreContract
):
    @pytest.fixture
    def store(self) -> MemoryJournal:
        return MemoryJournal()


class TestSqliteJournal(
    JournalContract, SnapshotStoreContract, DurableStateStoreContract
):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[SqliteJournal]:
        async with SqliteJournal(tmp_path / "journal.db") as journal:
            yield journal


class TestSqliteJournalNormal(JournalContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[SqliteJournal]:
        async with SqliteJournal(tmp_path / "j.db", synchronous="NORMAL") as journal:
            yield journal
