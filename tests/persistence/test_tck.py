"""The journals run the contract every journal plugin keeps
(actors.persistence.testing.tck)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.persistence import JetStreamJournal, MemoryJournal, SqliteJournal
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


class TestJetStreamJournal(
    JournalContract, SnapshotStoreContract, DurableStateStoreContract
):
    @pytest.fixture
    async def store(
        self, jetstream_server: NatsServer
    ) -> AsyncIterator[JetStreamJournal]:
        # A stream (and buckets) of its own per test, on the session's server.
        async with JetStreamJournal(
            jetstream_server.url, stream=f"T{new_nuid(10)}"
        ) as journal:
            yield journal


class TestJetStreamJournalSmallPages(JournalContract):
    # Reads cross many direct get batches and binary searches.
    @pytest.fixture
    async def store(
        self, jetstream_server: NatsServer
    ) -> AsyncIterator[JetStreamJournal]:
        async with JetStreamJournal(
            jetstream_server.url, stream=f"T{new_nuid(10)}", read_batch=1
        ) as journal:
            yield journal
