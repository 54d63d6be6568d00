"""Every ask is accounted for exactly once, under seeded random interleavings of
timeouts, cancel scopes and (on asyncio) native ``Task.cancel()`` at any point
(before the ask is queued, while it waits for room, while it waits for the
reply, after the reply was handed over), to an actor with a small mailbox and
to pools of both routings.

The invariant, per ask: a message the actor handled has its reply either
returned to the asker or counted as an ``"ask abandoned"`` dead letter, never
both, never twice; a message it never handled returned nothing and is at most
one other dead letter (it was queued when the system stopped).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorSystem, AskTimeout, DeadLetter

from ._support import on_asyncio

pytestmark = pytest.mark.anyio

ASKS = 240


class Handler(Actor):
    """Takes a few checkpoints, records the id, replies with it; may schedule
    a native cancel of its asker first (so it lands after the hand-over)."""

    def __init__(self, handled: list[int], natives: dict[int, Any]) -> None:
        self.handled = handled
        self.natives = natives

    async def receive(self, message: tuple[int, int, bool]) -> int:
        ident, steps, cancel_asker = message
        for _ in range(steps):
            await anyio.lowlevel.checkpoint()
        self.handled.append(ident)
        task = self.natives.get(ident)
        if cancel_asker and task is not None:
            asyncio.get_running_loop().call_soon(task.cancel)
        return ident


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_every_ask_is_replied_or_a_dead_letter_exactly_once(seed: int) -> None:
    rng = random.Random(seed)
    native = on_asyncio()
    handled: list[int] = []
    natives: dict[int, asyncio.Task[Any]] = {}
    replies: list[int] = []
    letters: list[DeadLetter] = []

    async with ActorSystem(dead_letters_kept=0) as system:
        system.dead_letters.subscribe(letters.append)
        targets = [
            system.spawn(Handler, handled, natives, capacity=2),
            system.spawn_pool(
                Handler, 2, handled, natives, routing="round_robin", capacity=1
            ),
            system.spawn_pool(
                Handler, 2, handled, natives, routing="shared_queue", capacity=2
            ),
        ]

        async def ask(ident: int, target: Any, timeout: float, steps: int) -> None:
            message = (ident, steps, rng.random() < 0.2)
            with contextlib.suppress(AskTimeout):
                replies.append(await target.ask(message, timeout=timeout))

        async def cancel_after(scope: anyio.CancelScope, checkpoints: int) -> None:
            for _ in range(checkpoints):
                await anyio.lowlevel.checkpoint()
            scope.cancel()

        async def scoped(ident: int, target: Any, timeout: float, steps: int) -> None:
            with anyio.CancelScope() as scope:
                tg.start_soon(cancel_after, scope, rng.randrange(8))
                await ask(ident, target, timeout, steps)

        async def natively_cancel(task: asyncio.Task[Any], checkpoints: int) -> None:
            for _ in range(checkpoints):
                await anyio.lowlevel.checkpoint()
            task.cancel()

        tasks: list[asyncio.Task[Any]] = []
        async with anyio.create_task_group() as tg:
            for ident in range(ASKS):
                target = rng.choice(targets)
                timeout = rng.choice([0.002, 0.01, 5.0, 5.0])
                steps = rng.randrange(4)
                mode = rng.choice(
                    ["plain", "scope", "native"] if native else ["plain", "scope"]
                )
                if mode == "plain":
                    tg.start_soon(ask, ident, target, timeout, steps)
                elif mode == "scope":
                    tg.start_soon(scoped, ident, target, timeout, steps)
                else:
                    task = asyncio.ensure_future(ask(ident, target, timeout, steps))
                    natives[ident] = task
                    tasks.append(task)
                    if rng.random() < 0.5:
                        tg.start_soon(natively_cancel, task, rng.randrange(8))
                if rng.random() < 0.3:
                    await anyio.lowlevel.checkpoint()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    assert len(handled) == len(set(handled)), "a message was handled twice"
    assert len(replies) == len(set(replies)), "a reply was returned twice"
    abandoned = Counter(
        letter.message[0] for letter in letters if letter.reason == "ask abandoned"
    )
    others = Counter(
        letter.message[0] for letter in letters if letter.reason != "ask abandoned"
    )
    returned = set(replies)
    for ident in range(ASKS):
        if ident in handled:
            assert (ident in returned) + abandoned[ident] == 1, ident
            assert others[ident] == 0, ident
        else:
            assert ident not in returned and abandoned[ident] == 0, ident
            assert others[ident] <= 1, ident
    # Not vacuous: each way an ask ends happened.
    assert returned and abandoned
