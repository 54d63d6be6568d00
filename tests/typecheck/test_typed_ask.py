"""``ask`` is typed by its Request: mypy (strict) accepts the right uses and
rejects a reply assigned to the wrong type, instead of letting it pass as Any."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

GOOD = '''
from dataclasses import dataclass
from typing import Any, assert_type

from actors import ActorRef, ActorSystem, PoolRef, Request


@dataclass
class Get(Request[int]):
    key: str


async def uses(ref: ActorRef[Any], pool: PoolRef[Any], s: ActorSystem) -> None:
    assert_type(await ref.ask(Get("k")), int)
    assert_type(await pool.ask(Get("k")), int)
    assert_type(s.from_thread.ask(ref, Get("k")), int)
    pooled: int = await pool.ask(Get("k"))
    threaded: int = s.from_thread.ask(ref, Get("k"))
    print(pooled, threaded)
    as_int: int = await ref.ask(Get("k"))
    as_float: float = await ref.ask(Get("k"))  # int is a float for mypy
    as_object: object = await ref.ask(Get("k"))
    untyped: str = await ref.ask("a plain message: the reply is Any")
    print(as_int, as_float, as_object, untyped)
'''

BAD = '''
from dataclasses import dataclass
from typing import Any

from actors import ActorRef, ActorSystem, PoolRef, Request


@dataclass
class Get(Request[int]):
    key: str


async def misuses(ref: ActorRef[Any], pool: PoolRef[Any], s: ActorSystem) -> None:
    wrong: str = await ref.ask(Get("k"))  # line 14
    also_wrong: list[int] = await ref.ask(Get("k"))  # line 15
    from_pool: str = await pool.ask(Get("k"))  # line 16
    from_thread: bytes = s.from_thread.ask(ref, Get("k"))  # line 17
    print(wrong, also_wrong, from_pool, from_thread)
'''


def test_mypy_accepts_typed_asks_and_rejects_a_mismatched_reply(
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
    assert bad_lines == [14, 15, 16, 17], out
    assert all("Incompatible types in assignment" in e for e in errors), out
    # The async asks name the mismatch (a sync call is checked as int already).
    assert sum("ReplyTypeMismatch" in e for e in errors) == 3, out
