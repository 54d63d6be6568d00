"""A failed expectation of the test kit starts at the test's own line: the
kit's frames are hidden from pytest's traceback (``__tracebackhide__``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

TEST = """
import pytest

from actors import Actor
from actors.testing import BehaviorTestKit, TestProbe, await_assert


class Quiet(Actor):
    def receive(self, message):
        return None


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_probe(actor_system):
    probe = TestProbe(actor_system)
    probe.ref.tell("hello")
    await probe.expect_message("goodbye", timeout=1)  # THE-PROBE-LINE


@pytest.mark.anyio
async def test_await_assert(actor_system):
    state = []

    def check():
        assert len(state) > 100, "still short"

    await await_assert(check, timeout=0.05)  # THE-AWAIT-LINE


@pytest.mark.anyio
async def test_within(actor_system):
    probe = TestProbe(actor_system)
    async with probe.within(0.5, 1.0):  # THE-WITHIN-LINE
        pass


def test_behavior_kit():
    kit = BehaviorTestKit(Quiet)
    kit.run("x")
    kit.expect_effect(object)  # THE-KIT-LINE
"""


def test_kit_failures_show_the_test_s_line_not_the_kit_s(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(textwrap.dedent(TEST))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "anyio"),
            *("-p", "no:cacheprovider", "-q", "--tb=long", "test_user.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    out = done.stdout
    assert "4 failed" in out, out
    for marker in ("PROBE", "AWAIT", "WITHIN", "KIT"):
        marker = f"THE-{marker}-LINE"
        assert marker in out, out
    # No frame of the kit's expectation helpers: the source lines pytest
    # prints come from the test file only.
    for kit_file in ("_probe.py", "_behavior.py"):
        assert f"actors/testing/{kit_file}:" not in out, out
