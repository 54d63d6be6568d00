"""Entity refs are typed by their entity type: mypy (strict) accepts the
right uses (an ``Entity[M]`` gives an ``EntityRef[M]``, ``ask`` is typed by
its Request) and rejects a message of another type and a mismatched reply."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

GOOD = '''
from dataclasses import dataclass
from typing import Any, assert_type

from actors import Actor, ActorSystem, Request
from actors.sharding import Cluster, Entity, EntityRef, Member, Sharding


@dataclass
class Get(Request[int]):
    pass


def members(system: ActorSystem) -> list[Member]:
    assert_type(system.cluster, Cluster)
    assert_type(system.cluster.self_member, Member | None)
    return system.cluster.members


class Counter(Actor[Get]):
    def __init__(self, key: str) -> None:
        self.key = key

    def receive(self, message: Get) -> int:
        return 1


COUNTER = Entity("counter", Counter)
assert_type(COUNTER, Entity[Get])


async def uses(sharding: Sharding) -> None:
    ref = sharding.entity_ref(COUNTER, "42")
    assert_type(ref, EntityRef[Get])
    assert_type(await ref.ask(Get()), int)
    ref.tell(Get())
    await ref.send(Get())
    untyped = sharding.entity_ref("counter", "42")
    assert_type(untyped, EntityRef[Any])
'''

BAD = '''
from dataclasses import dataclass

from actors import Actor, Request
from actors.sharding import Entity, Sharding


@dataclass
class Get(Request[int]):
    pass


class Counter(Actor[Get]):
    def __init__(self, key: str) -> None:
        self.key = key

    def receive(self, message: Get) -> int:
        return 1


COUNTER = Entity("counter", Counter)


async def misuses(sharding: Sharding) -> None:
    ref = sharding.entity_ref(COUNTER, "42")
    ref.tell("not a Get")  # line 26
    wrong: str = await ref.ask(Get())  # line 27
    Entity("counter", lambda key, other: Counter(key))  # line 28
'''


def test_mypy_types_entity_refs_by_their_entity_type(tmp_path: Path) -> None:
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
        {int(m.group(1)) for e in errors if (m := re.search(r"bad\.py:(\d+):", e))}
    )
    assert bad_lines == [26, 27, 28], out
