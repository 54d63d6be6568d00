"""Typed actors: ``Actor[M]`` types the refs ``spawn`` returns, the factory's
arguments are checked against it, and ``join()`` is an ``ExitReason``. mypy
(strict) accepts the program's right uses and rejects each misuse with the
error code marked on its line (``# E: code``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ACTORS = '''
from dataclasses import dataclass
from typing import Any

from actors import Actor, Request


@dataclass
class Increment:
    by: int = 1


@dataclass
class Get(Request[int]):
    pass


CounterMsg = Increment | Get


class Counter(Actor[CounterMsg]):
    def __init__(self, start: int, *, step: int = 1) -> None:
        self.value = start
        self.step = step

    def receive(self, message: CounterMsg) -> int | None:
        match message:
            case Increment(by=by):
                self.value += by * self.step
                return None
            case Get():
                return self.value


class Plain(Actor):
    def receive(self, message: Any) -> Any:
        return message
'''

GOOD = '''
from functools import partial
from typing import Any, assert_type

from actors import (
    Actor, ActorRef, ActorSystem, ExitReason, PoolRef, StopReason, Terminated,
)
from counter import Counter, CounterMsg, Get, Increment, Plain


class Parent(Actor[str]):
    def receive(self, message: str) -> None:
        child = self.context.spawn(Counter, 1, name="c", capacity=4)
        assert_type(child, ActorRef[CounterMsg])
        child.tell(Increment())
        pool = self.context.spawn_pool(Counter, 2, 0, routing="shared_queue")
        assert_type(pool, PoolRef[CounterMsg])


def reason_of(signal: Terminated) -> ExitReason:
    assert_type(signal.reason, StopReason | BaseException)
    return signal.reason


async def uses(system: ActorSystem) -> None:
    counter = system.spawn(Counter, 5, name="counter", capacity=8)
    assert_type(counter, ActorRef[CounterMsg])
    counter.tell(Increment(2))
    await counter.send(Get())
    assert_type(await counter.ask(Get()), int)
    value: int = await counter.ask(Get(), timeout=1.0)
    stepped = system.spawn(partial(Counter, 0, step=3))
    assert_type(stepped, ActorRef[CounterMsg])
    made_by_hand = system.spawn(lambda: Counter(0, step=2), restart="temporary")
    assert_type(made_by_hand, ActorRef[CounterMsg])
    plain = system.spawn(Plain)
    assert_type(plain, ActorRef[Any])
    plain.tell("anything")
    plain.tell(42)
    pool = system.spawn_pool(Counter, 4, 0)
    assert_type(pool, PoolRef[CounterMsg])
    pool.tell(Increment())
    assert_type(await pool.ask(Get()), int)
    threaded = system.from_thread.spawn(Counter, 1)
    assert_type(threaded, ActorRef[CounterMsg])
    untyped: ActorRef[Any] = counter
    fewer: ActorRef[Increment] = counter  # a ref may promise fewer messages
    reason = await counter.join()
    assert_type(reason, ExitReason)
    if isinstance(reason, StopReason):
        assert_type(reason, StopReason)
    else:
        assert_type(reason, BaseException)
    assert_type(await pool.join(), ExitReason)
    print(value, untyped, fewer)
'''

BAD = '''
from functools import partial

from actors import Actor, ActorRef, ActorSystem, StopReason
from counter import Counter, Get, Increment


class Spawner(Actor[str]):
    def receive(self, message: str) -> None:
        self.context.spawn(Counter, "one")  # E: arg-type
        self.context.spawn_pool(Counter, 2)  # E: arg-type


class WrongReceive(Actor[int]):
    def receive(self, message: str) -> None:  # E: override
        pass


async def misuses(system: ActorSystem) -> None:
    counter = system.spawn(Counter, 5)
    counter.tell("increment")  # E: arg-type
    await counter.send(3)  # E: arg-type
    await counter.ask("get")  # E: call-overload
    wrong: str = await counter.ask(Get())  # E: assignment
    system.spawn(Counter, "five")  # E: arg-type
    system.spawn(Counter)  # E: arg-type
    system.spawn(Counter, 1, 2)  # E: arg-type
    system.spawn(Counter, 1, step=2)  # E: call-arg
    system.spawn(partial(Counter, 0, stp=3))  # E: call-arg
    pool = system.spawn_pool(Counter, 2, "zero")  # E: arg-type
    system.spawn_pool(Counter, 2, 0).tell(Get)  # E: arg-type
    system.from_thread.spawn(Counter, 1.5)  # E: arg-type
    only_ints: ActorRef[int] = counter  # E: assignment
    stopped: StopReason = await counter.join()  # E: assignment
    print(wrong, pool, only_ints, stopped, Increment)
'''


def test_mypy_accepts_typed_actors_and_rejects_each_misuse(tmp_path: Path) -> None:
    (tmp_path / "counter.py").write_text(ACTORS)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    out, _err, _status = mypy_api.run(
        [
            "--strict",
            "--no-incremental",
            "--show-error-codes",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(tmp_path / "counter.py"),
            str(tmp_path / "good.py"),
            str(tmp_path / "bad.py"),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert not [e for e in errors if "bad.py" not in e], out
    expected = {
        number: match.group(1)
        for number, line in enumerate(BAD.splitlines(), start=1)
        if (match := re.search(r"# E: ([\w-]+)", line))
    }
    found: dict[int, set[str]] = {}
    for error in errors:
        match = re.search(r"bad\.py:(\d+): error: .*\[([\w-]+)\]$", error)
        assert match, error
        found.setdefault(int(match.group(1)), set()).add(match.group(2))
    assert {line: {code} for line, code in expected.items()} == found, out
