"""``ActorSystem.remote`` is typed as the extension given: with
``remote=Remote(...)`` mypy (strict) knows ``system.remote`` is a ``Remote``
(its ``url``, ``lookup``, ``spawn_pool``), and rejects what a Remote has not;
a bare ``ActorSystem`` (an annotation, ``context.system``) keeps ``Any``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

GOOD = '''
from typing import Any, assert_type

from actors import Actor, ActorRef, ActorSystem
from actors.remote import Remote, RemotePoolRef


class Worker(Actor):
    def receive(self, message: Any) -> Any:
        remote = self.context.system.remote  # a bare ActorSystem: Any
        return remote.node.node


async def main() -> None:
    async with ActorSystem(remote=Remote(node="a")) as system:
        assert_type(system, ActorSystem[Remote])
        assert_type(system.remote, Remote)
        url: str = system.remote.url
        ref: ActorRef[Any] = await system.remote.lookup("b", "/user/x")
        pool = system.remote.spawn_pool(Worker, nodes=["b"])
        assert_type(pool, RemotePoolRef[Any])
        as_ref: ActorRef[Any] = pool
        print(url, ref, as_ref)
    async with ActorSystem() as local:
        print(local.remote)
'''

BAD = '''from actors import ActorSystem
from actors.remote import Remote


async def main() -> None:
    async with ActorSystem(remote=Remote(node="a")) as system:
        system.remote.no_such_thing()  # line 7
        count: int = system.remote.url  # line 8
'''


def test_mypy_knows_the_remote_extension_a_system_was_given(tmp_path: Path) -> None:
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
    assert bad_lines == [7, 8], out
