"""The embedded server of ``Remote(url=None)`` starts with JetStream and a
store directory when asked, and a JetStream journal uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors import ActorSystem
from actors.persistence import JetStreamJournal

from ._model import Balance, BankAccount, Deposit

pytestmark = pytest.mark.anyio

remote = pytest.importorskip("actors.remote")


async def test_a_journal_on_the_remote_layer_s_embedded_jetstream_server(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    options = {"jetstream": True, "store_dir": store}
    first = remote.Remote(None, node="n1", server_options=options)
    async with (
        ActorSystem(remote=first) as system,
        JetStreamJournal(system.remote.url, stream="EMBEDDED") as journal,
    ):
        async with ActorSystem(journal=journal) as durable:
            account = durable.spawn(BankAccount)
            assert await account.ask(Deposit(7)) == 7
        assert await journal.highest_sequence_nr("account-alice") == 1
    assert any(store.rglob("*.blk"))  # the stream's files are in the store
    second = remote.Remote(None, node="n2", server_options=options)
    async with (
        ActorSystem(remote=second) as system,
        JetStreamJournal(system.remote.url, stream="EMBEDDED") as journal,
        ActorSystem(journal=journal) as durable,
    ):
        assert await durable.spawn(BankAccount).ask(Balance()) == 7
