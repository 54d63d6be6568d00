"""A producer node process for the crash tests (started as ``python -m``
this module): a durable producer sending ``Order(n)`` to the consumer
controller that registers to it, one line per accepted message, until
``total`` are accepted and confirmed.

``PRODUCER URL CLUSTER DB BACKEND TOTAL`` (``DB``: a SQLite file, or
``jetstream:STREAM`` for a JetStream journal on the node's own server)
spawns the producer controller ``/user/producer`` (recovering its queue)
and prints ``ready <next seq nr> <unconfirmed>``; the consumer registers to
it then (``ConsumerController.register_to``: no lookup, no retry here), and
``send`` waits for its demand. Then ``accepted <seq nr>`` after each
``send`` returned, and ``done`` once every message is confirmed. The test
kills it with SIGKILL anywhere.
"""

from __future__ import annotations

import sys
from typing import Any

from actors import ActorSystem
from actors.delivery import DurableProducerQueue, ProducerController
from actors.persistence import Codec, JetStreamJournal, Journal, SqliteJournal
from actors.remote import Remote

from ._consumer_child import Order
from ._kill_campaign import run_child


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
        stats = producer.statistics()
        print("ready", producer.next_seq_nr, stats.unconfirmed, flush=True)
        while producer.next_seq_nr <= total:
            seq_nr = await producer.send(Order(producer.next_seq_nr))
            print("accepted", seq_nr, flush=True)
        await producer.wait_confirmed()
        print("done", flush=True)


if __name__ == "__main__":
    url, cluster, db, backend, total = sys.argv[1:6]
    run_child(main, url, cluster, db, int(total), backend=backend)
