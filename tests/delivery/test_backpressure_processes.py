"""Backpressure across node processes: a slow consumer in one process holds
the producer's demand in another, so what is held anywhere on the way stays
within the consumer's window however many messages the producer tries to
send; each process's resident set growth is reported (``-s``), never
asserted (the allocator decides RSS): the assertions are counts.

* While the consumer holds its first message, the producer accepted exactly
  the window and waits (no demand left): nothing more is buffered.
* Over the whole run, at every message: the producer's unconfirmed
  messages, and the messages queued in the consumer's and its controller's
  mailboxes, stay within the window; every message is handled once, in order.

``ACTORS_BACKPRESSURE_COUNT`` sends more messages (default 2,000 of 1 KiB):
with a bounded buffer the RSS growth stays flat as the count grows.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import pytest

from actors.nats import NatsServer

from . import _backpressure_children
from ._kill_campaign import BACKENDS, node_group, start_node

pytestmark = pytest.mark.anyio

CHILD = _backpressure_children.__name__
COUNT = int(os.environ.get("ACTORS_BACKPRESSURE_COUNT", "2000"))
WINDOW = 16


@pytest.fixture(params=BACKENDS)
def child_backend(request: pytest.FixtureRequest) -> str:
    """The event loop of both node processes."""
    return str(request.param)


@pytest.fixture
def anyio_backend() -> Any:
    # This process only relays; the children run on each backend in turn.
    return "asyncio"


@pytest.mark.timeout(120)
async def test_a_slow_consumer_process_holds_the_producer_process_to_its_window(
    nats_server: NatsServer, tmp_path: Path, child_backend: str
) -> None:
    cluster = "c" + secrets.token_hex(6)
    err = tmp_path / "children.err"
    url = nats_server.url
    async with node_group() as nodes:
        producer = nodes["producer"] = await start_node(
            "producer",
            CHILD,
            "producer",
            url,
            cluster,
            child_backend,
            COUNT,
            WINDOW,
            err=err,
        )
        consumer = nodes["consumer"] = await start_node(
            "consumer",
            CHILD,
            "consumer",
            url,
            cluster,
            child_backend,
            COUNT,
            WINDOW,
            err=err,
            stdin=True,
        )
        await consumer.expect("holding")
        _, accepted, unconfirmed = await producer.expect("blocked")
        # The consumer holds its first message: the window was accepted, no more.
        assert (int(accepted), int(unconfirmed)) == (WINDOW, WINDOW)
        await consumer.tell("go")
        _, most_unconfirmed, producer_rss = await producer.expect("done")
        _, in_order, most_queued, consumer_rss = await consumer.expect("done")
    assert int(in_order) == 1  # each once, in order
    assert int(most_unconfirmed) <= WINDOW
    assert int(most_queued) <= WINDOW
    growth = {
        "producer": int(producer_rss) - int(producer.ready[1]),
        "consumer": int(consumer_rss) - int(consumer.ready[1]),
    }
    print(
        f"\nbackpressure across processes ({child_backend}): {COUNT} messages of "
        f"1 KiB, window {WINDOW}: most unconfirmed {most_unconfirmed}, most "
        f"queued at the consumer {most_queued}; most RSS above the RSS at ready: "
        f"producer {growth['producer']} KiB, consumer {growth['consumer']} KiB"
    )
