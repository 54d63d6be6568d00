"""The API to find and manage actors is typed: mypy (strict) accepts a small
program using context.ask / context.run with their Result, lookups, the
registry, system.stop, pools as refs, statistics and failure logging, and
rejects its misuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

GOOD = '''
import logging
from dataclasses import dataclass
from typing import Any, assert_type

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    FailureLogging,
    OneForOne,
    PoolRef,
    RefStatistics,
    Request,
    Result,
)


@dataclass
class Get(Request[int]):
    key: str


@dataclass
class Got:
    value: int


class Client(Actor):
    def __init__(self, store: ActorRef[Any], pool: PoolRef[Any]) -> None:
        self.store = store
        self.pool = pool

    def on_start(self) -> None:
        self.context.ask(self.store, Get("k"), 1.0, then=self.adapt)
        self.context.ask(self.pool, "anything", then=lambda r: r.ok)
        self.context.run(self.fetch, then=self.fetched)
        self.context.run(self.fetch())
        self.context.watch(self.pool)
        self.context.stop(self.pool)
        child: ActorRef[Any] | None = self.context.child("x")
        print(child)

    def adapt(self, result: Result[int]) -> Got:
        return Got(result.value if result.ok else -1)

    async def fetch(self) -> str:
        return "page"

    def fetched(self, result: Result[str]) -> object:
        error: BaseException | None = result.error
        return result.value if error is None else error


class Store(Actor):
    def receive(self, message: Any) -> Any:
        return 1


async def main() -> None:
    async with ActorSystem(
        log_failures=FailureLogging(level=logging.INFO, traceback=False),
        strategy=OneForOne(log_failures=False),
    ) as system:
        store = system.spawn(Store)
        pool = system.spawn_pool(Store, 2, strategy=OneForOne(max_restarts=1))
        system.spawn(Client, store, pool)
        as_ref: ActorRef[Any] = pool
        system.register("clients", pool)
        found: ActorRef[Any] | None = system.whereis("clients")
        looked: ActorRef[Any] = system.lookup("/user/clients")
        stats = as_ref.statistics()
        assert_type(stats, RefStatistics)
        queued: int = stats.queued_messages
        capacity: int | None = stats.capacity
        print(found, looked, queued, capacity)
        system.unregister("clients")
        system.stop()
        await system.wait_exited()
'''

BAD = '''from typing import Any

from actors import (
    Actor,
    ActorRef,
    ActorSystem,
    FailureLogging,
    OneForOne,
    Result,
)


class Client(Actor):
    def receive(self, message: Any) -> None:
        self.context.run(42)  # line 15
        self.context.run(self.fetch, then=self.wrong)  # line 16
        self.context.ask("/user/store", "x")  # line 17
        self.context.ask(self.context.self_ref, "x", then=3)  # line 18

    async def fetch(self) -> int:
        return 1

    def wrong(self, result: Result[str]) -> str:
        return result.value


async def main(system: ActorSystem, ref: ActorRef[Any]) -> None:
    system.register(1, ref)  # line 28
    found: ActorRef[Any] = system.whereis("x")  # line 29
    system.stop().wait()  # line 30
    stats = ref.statistics()
    stats.queued_messages = 3  # line 32
    ActorSystem(log_failures="loud")  # line 33
    OneForOne(log_failures=3.5)  # line 34
    FailureLogging(level="ERROR")  # line 35
    result: Result[int] = Result.success(1)
    text: str = result.value  # line 37
    print(found, text)
'''


def test_mypy_accepts_the_management_api_and_rejects_its_misuses(
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
    found = (re.search(r"bad\.py:(\d+):", e) for e in errors)
    bad_lines = sorted({int(m.group(1)) for m in found if m is not None})
    assert bad_lines == [15, 16, 17, 18, 28, 29, 30, 32, 33, 34, 35, 37], out
