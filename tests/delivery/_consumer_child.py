"""A consumer node process for the crash tests (started as ``python -m``
this module): a consumer controller whose handler records each ``Order``
in a SQLite ledger keyed by the delivery's key (producer id, epoch,
sequence number) in the same transaction as the effect, so a message
handed over again after a crash is seen and skipped (effectively once).

``CONSUMER URL CLUSTER LEDGER BACKEND`` registers to ``/user/producer`` on
the node ``producer`` (up before this starts: one lookup) and prints
``ready``, then ``handled <seq nr>`` after each new effect was committed and
``again <seq nr>`` for a message the ledger had already (handled by a
consumer that died before its confirmation got out). The test kills it with
SIGKILL anywhere.
"""

from __future__ import annotations

import sqlite3
import sys

import anyio
import msgspec

from actors import ActorSystem
from actors.delivery import ConsumerController, Delivery
from actors.remote import Remote

from ._kill_campaign import run_child


class Order(msgspec.Struct, frozen=True):
    n: int


def ledger(path: str) -> sqlite3.Connection:
    """The effects table (made if missing)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS effects (producer TEXT, epoch TEXT,"
        " seq_nr INTEGER, n INTEGER, PRIMARY KEY (producer, epoch, seq_nr))"
    )
    return db


async def main(url: str, cluster: str, path: str) -> None:
    db = ledger(path)

    def handle(delivery: Delivery[Order]) -> None:
        # The effect and its key in one transaction: a key seen is skipped.
        with db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO effects VALUES (?, ?, ?, ?)",
                (*delivery.key, delivery.message.n),
            )
        word = "handled" if cursor.rowcount == 1 else "again"
        print(word, delivery.seq_nr, flush=True)

    remote = Remote(url, system=cluster, node="consumer", types=[(Order, "Order")])
    async with ActorSystem(remote=remote) as system:
        controller = ConsumerController.spawn(
            system, handler=handle, window=16, name="consumer"
        )
        controller.register_to(await system.remote.lookup("producer", "/user/producer"))
        print("ready", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    url, cluster, path, backend = sys.argv[1:5]
    run_child(main, url, cluster, path, backend=backend)
