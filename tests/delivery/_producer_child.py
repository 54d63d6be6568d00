"""A producer node process for the crash tests: a durable producer (SQLite)
sending ``Order(n)`` to the consumer node's controller, one line per
accepted message, until ``total`` are accepted and confirmed.

``python _producer_child.py URL CLUSTER DB BACKEND TOTAL`` (``DB``: a SQLite
file, or ``jetstream:STREAM`` for a JetStream journal on the node's own
server) prints
``ready <next seq nr> <unconfirmed>``, then ``accepted <seq nr>`` after each
``send`` returned, then ``done``. The test kills it with SIGKILL anywhere.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import msgspec

from actors import ActorSystem
from actors.delivery import DurableProducerQueue, ProducerController
from actors.persistence import Codec, JetStreamJournal, Journal, SqliteJournal
from actors.remote import Remote


class Order(msgspec.Struct, frozen=True):
    n: int


async def main(url: str, cluster: str, db: str, total: int) -> None:
    remote = Remote(url, system=cluster, node="producer", types=[(Order, "Order")])
    journal: Journal
    if db.startswith("jetstream:"):
        journal = JetStreamJournal(url, stream=db.removeprefix("jetstream:"))
    else:
        journal = SqliteJournal(db, synchronous="NORMAL")
    async with journal, ActorSystem(remote=remote) as system:
        queue = DurableProducerQueue(journal, Codec(Order))
        producer: ProducerController[Any] = await ProducerController.start(
            system, "orders", queue=queue, resend_interval=0.2, name="producer"
        )
        while True:
            try:
                ref = await system.remote.lookup("consumer", "/user/consumer")
                break
            except Exception:  # not up yet: ActorNotFound, NodeUnreachable
                await anyio.sleep(0.05)
        producer.register_consumer(ref)
        stats = producer.statistics()
        print("ready", producer.next_seq_nr, stats.unconfirmed, flush=True)
        while producer.next_seq_nr <= total:
            seq_nr = await producer.send(Order(producer.next_seq_nr))
            print("accepted", seq_nr, flush=True)
        await producer.wait_confirmed()
        print("done", flush=True)


if __name__ == "__main__":
    url, cluster, db, backend, total = sys.argv[1:6]
    name, options = (
        ("asyncio", {"use_uvloop": True}) if backend == "uvloop" else (backend, {})
    )
    anyio.run(main, url, cluster, db, int(total), backend=name, backend_options=options)
