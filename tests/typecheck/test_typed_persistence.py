"""Durable actors type-check as users write them: an effect of one event
class is an effect of the union the actor declares; spawning gives a ref of
the actor's commands; a wrong event or state type is an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

GOOD = '''
from dataclasses import dataclass

from actors import ActorRef, ActorSystem, Request
from actors.persistence import (
    Codec,
    DurableStateActor,
    Effect,
    EventSourcedActor,
    StateEffect,
)


@dataclass
class Add(Request[int]):
    n: int


@dataclass
class Get(Request[int]):
    pass


@dataclass
class Added:
    n: int


@dataclass
class Cleared:
    pass


@dataclass
class Total:
    value: int = 0


class Counter(EventSourcedActor[Add | Get, Added | Cleared, Total]):
    codec = Codec(Added, Cleared, Total)

    def __init__(self, name: str) -> None:
        self.persistence_id = name

    def empty_state(self) -> Total:
        return Total()

    def on_command(
        self, state: Total, command: Add | Get
    ) -> Effect[Added | Cleared, Total]:
        match command:
            case Add(n) if n == 0:
                return Effect.persist(Cleared())
            case Add(n):
                return Effect.persist(Added(n)).then_reply(lambda s: s.value)
            case Get():
                return Effect.reply(state.value)

    def on_event(self, state: Total, event: Added | Cleared) -> Total:
        match event:
            case Added(n):
                return Total(state.value + n)
            case Cleared():
                return Total()


class Box(DurableStateActor[Add, Total]):
    codec = Codec(Total)

    def __init__(self) -> None:
        self.persistence_id = "box"

    def empty_state(self) -> Total:
        return Total()

    def on_command(self, state: Total, command: Add) -> StateEffect[Total]:
        return StateEffect.persist(Total(state.value + command.n)).then_reply(
            lambda s: s.value
        )


async def uses(system: ActorSystem) -> None:
    ref: ActorRef[Add | Get] = system.spawn(Counter, "c")
    total: int = await ref.ask(Add(1))
    box: ActorRef[Add] = system.spawn(Box)
    print(total, box)
'''

BAD = '''
from dataclasses import dataclass

from actors.persistence import Codec, Effect, EventSourcedActor, StateEffect


@dataclass
class Added:
    n: int


@dataclass
class Total:
    value: int = 0


class Counter(EventSourcedActor[int, Added, Total]):
    codec = Codec(Added, Total)

    def on_command(self, state: Total, command: int) -> Effect[Added, Total]:
        return Effect.persist("not an event")  # line 21

    def on_event(self, state: Total, event: Added) -> Total:
        return state.value  # line 24

    def empty_state(self) -> Total:
        return StateEffect.none()  # line 27
'''


def test_mypy_accepts_durable_actors_and_rejects_wrong_events_and_states(
    tmp_path: Path,
) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    out, _err, _status = mypy_api.run(
        [
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(tmp_path / "good.py"),
            str(tmp_path / "bad.py"),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert not [e for e in errors if "good.py" in e], out
    bad_lines = sorted(
        int(m.group(1)) for e in errors if (m := re.search(r"bad\.py:(\d+):", e))
    )
    assert bad_lines == [21, 24, 27], out
