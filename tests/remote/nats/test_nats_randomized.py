"""A seeded random model run: random publishes (binary payloads with CRLFs,
sizes up to tens of KiB, headers or none), subscriptions with wildcards,
unsubscribes with and without a max, flushes, all on one connection whose own
order makes the server's behaviour exact. Every subscription must receive
exactly what the model says, in order: framing, partial reads and
subscription bookkeeping under arbitrary TCP chunking. (A plain unsubscribe
drops what is still in flight, so those subscriptions get a prefix.)"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import anyio
import pytest

from actors.nats import Msg, NatsServer, Subscription, connect

pytestmark = pytest.mark.anyio

OPERATIONS = 400


@dataclass
class Model:
    sub: Subscription
    pattern: str
    expected: list[tuple[str, bytes, dict[str, str] | None]] = field(
        default_factory=list
    )
    active: bool = True
    unsubscribed: bool = False
    max_msgs: int = 0

    def matches(self, subject: str) -> bool:
        if self.pattern.endswith(".*"):
            head = self.pattern[:-2]
            return (
                subject.startswith(head + ".") and "." not in subject[len(head) + 1 :]
            )
        return self.pattern == subject


def _payload(rng: random.Random) -> bytes:
    size = rng.choice([0, 1, 2, 16, 100, 1000, rng.randrange(1, 40_000)])
    body = bytearray(rng.randbytes(size))
    for _ in range(min(3, size // 4)):  # CRLFs inside the payload
        at = rng.randrange(0, size - 1)
        body[at : at + 2] = b"\r\n"
    return bytes(body)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_operations_deliver_exactly_what_the_model_says(
    nats_server: NatsServer, subject: str, seed: int
) -> None:
    rng = random.Random(seed)
    subjects = [f"{subject}.{k}" for k in range(3)]
    models: list[Model] = []
    async with connect(nats_server.url) as nc:
        for _ in range(OPERATIONS):
            action = rng.random()
            if action < 0.1 or not models:
                pattern = rng.choice([*subjects, f"{subject}.*"])
                models.append(Model(await nc.subscribe(pattern), pattern))
            elif action < 0.15:
                model = rng.choice(models)
                if model.active:
                    model.active = False
                    model.unsubscribed = True
                    await model.sub.unsubscribe()
            elif action < 0.2:
                model = rng.choice(models)
                if model.active and not model.max_msgs:
                    model.max_msgs = len(model.expected) + rng.randrange(1, 5)
                    await model.sub.unsubscribe(max_msgs=model.max_msgs)
            elif action < 0.25:
                await nc.flush()
            else:
                target = rng.choice(subjects)
                payload = _payload(rng)
                headers = {"Seq": str(rng.random())} if rng.random() < 0.3 else None
                if rng.random() < 0.5:
                    nc.publish_nowait(target, payload, headers=headers)
                else:
                    await nc.publish(target, payload, headers=headers)
                for model in models:
                    if model.active and model.matches(target):
                        model.expected.append((target, payload, headers))
                        if len(model.expected) == model.max_msgs:
                            model.active = False
        await nc.flush()
        for model in models:
            got: list[Msg] = []
            with anyio.fail_after(10):
                while len(got) < len(model.expected):
                    try:
                        got += await model.sub.next_msgs(1000)
                    except anyio.EndOfStream:
                        break
            received = [(m.subject, m.data, m.headers) for m in got]
            if model.unsubscribed:
                # What was in flight when it unsubscribed is dropped: a prefix.
                assert received == model.expected[: len(received)]
            else:
                assert received == model.expected
            assert model.sub.pending == 0
            assert model.sub.dropped == 0
