"""The handler patterns are typed: mypy (strict) accepts a program using
become/unbecome, the stash, the receive timeout, ErrorReply and the
two-argument on_restart, and rejects their misuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

GOOD = '''
from collections.abc import Callable
from typing import Any, assert_type

from actors import Actor, ErrorReply, ReceiveTimeout, StashOverflow


class Door(Actor):
    def receive(self, message: Any) -> Any:
        match message:
            case ReceiveTimeout():
                self.context.set_receive_timeout(None)
            case "open":
                self.become(self.opened, discard_old=False)
                count: int = self.unstash_all()
                one: bool = self.unstash()
                print(count, one)
            case "withdraw":
                return ErrorReply(ValueError("closed"))
            case _:
                try:
                    self.stash()
                except StashOverflow:
                    return ErrorReply(RuntimeError("full"))
        return None

    async def opened(self, message: Any) -> Any:
        if message == "close":
            self.unbecome()
        self.context.set_receive_timeout(2.5)
        timeout: float | None = self.context.receive_timeout
        return timeout

    def on_restart(self, exc: BaseException | None, message: Any = None) -> None:
        print(exc, message)


def check(door: Door) -> None:
    assert_type(door.behaviour, Callable[[Any], Any])
    door.become(lambda message: message)
    reply = ErrorReply(KeyError("k"))
    assert_type(reply.error, Exception)
'''

BAD = '''from typing import Any

from actors import Actor, ErrorReply


class Door(Actor):
    def receive(self, message: Any) -> Any:
        self.become(42)  # line 8
        self.context.set_receive_timeout("soon")  # line 9
        count: str = self.unstash_all()  # line 10
        self.become(self.receive, True)  # line 11
        self.receive = self.opened  # line 12
        return ErrorReply("no")  # line 13

    def opened(self, message: Any) -> Any:
        return message

    def on_restart(self) -> None:  # line 18
        pass
'''


def test_mypy_accepts_the_handler_patterns_and_rejects_their_misuses(
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
        {int(m.group(1)) for e in errors if (m := re.search(r"bad\.py:(\d+):", e))}
    )
    assert bad_lines == [8, 9, 10, 11, 12, 13, 18], out
