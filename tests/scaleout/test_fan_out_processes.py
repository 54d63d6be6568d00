"""The main job across processes: examples/fan_out.py with its workers in
two node processes reports exactly what it reports in one process, also
when a node process is killed with ``kill -9`` mid-run, and so does its
durable mode (``--durable``: the paths are jobs of a durable work queue)."""

from __future__ import annotations

import importlib.util
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc"),
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fan_out.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scaleout_fan_out", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fan_out_example = _load()


@pytest.fixture
def anyio_backend() -> Any:
    return "asyncio"  # the workers are other processes: one backend is enough


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """600 files of random words (a fixed seed) in nested directories, and
    one unreadable file."""
    root = tmp_path_factory.mktemp("tree")
    rng = random.Random(14)
    words = [f"w{i}" for i in range(500)]
    for index in range(600):
        directory = root / f"d{index % 7}" / f"e{index % 3}"
        directory.mkdir(parents=True, exist_ok=True)
        lines = (
            " ".join(rng.choices(words, k=rng.randint(0, 12)))
            for _ in range(rng.randint(1, 400))
        )
        (directory / f"f{index}.txt").write_text("\n".join(lines))
    if os.geteuid() != 0:  # root reads everything
        locked = root / "locked.txt"
        locked.write_text("secret")
        locked.chmod(0)
    return root


def same(a: Any, b: Any) -> None:
    for field in ("files", "lines", "words", "bytes", "failed", "largest", "digests"):
        assert getattr(a, field) == getattr(b, field), field


def node_children() -> list[int]:
    """The node processes this process started."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = stat.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        if parent == me and b"actors.node" in command:
            found.append(int(entry))
    return found


class KillAt:
    """A stand-in for rich's Progress: when ``at`` files are done, it kills
    one node process with SIGKILL (once)."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.killed: int | None = None

    def add_task(self, description: str, total: Any = None) -> int:
        return 0

    def update(self, task: int, *, total: Any = None, completed: int = 0) -> None:
        if self.killed is None and completed >= self.at:
            [victim, *_] = node_children()
            os.kill(victim, signal.SIGKILL)
            self.killed = victim


async def test_fan_out_in_two_node_processes_reports_the_same_summary(
    tree: Path,
) -> None:
    local = await fan_out_example.fan_out(str(tree), workers=4)
    spread = await fan_out_example.fan_out(str(tree), workers=4, processes=2)
    assert spread.files == 600
    same(local, spread)
    assert node_children() == []  # the node processes left with the system


async def test_fan_out_totals_stay_exact_when_a_node_process_is_killed_mid_run(
    tree: Path,
) -> None:
    local = await fan_out_example.fan_out(str(tree), workers=4)
    killer = KillAt(150)
    spread = await fan_out_example.fan_out(
        str(tree), workers=4, processes=2, progress=killer
    )
    assert killer.killed is not None
    # At-least-once across the loss, counted once: exactly the same totals.
    same(local, spread)
    assert node_children() == []


async def test_fan_out_durable_totals_stay_exact_when_a_node_process_is_killed(
    tree: Path, tmp_path: Path
) -> None:
    from actors.delivery import DurableProducerQueue
    from actors.persistence import Codec, SqliteJournal

    local = await fan_out_example.fan_out(str(tree), workers=4)
    killer = KillAt(150)
    journal = tmp_path / "jobs.db"
    spread = await fan_out_example.fan_out(
        str(tree),
        workers=4,
        processes=2,
        durable=True,
        journal=str(journal),
        progress=killer,
    )
    assert killer.killed is not None
    # Jobs of a durable queue, run again when their node died: counted once.
    same(local, spread)
    assert node_children() == []
    # Every path was a stored job, and every job is done.
    async with SqliteJournal(journal) as store:
        loaded = await DurableProducerQueue(store, Codec(str)).load("files")
    assert loaded.unconfirmed == []
    assert loaded.next_seq_nr == len(fan_out_example.list_files(str(tree))) + 1


def run_main(tree: Path, *options: str) -> str:
    output = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tree), "--workers", "4", *options],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    ).stdout
    # Everything but the timing rows and the title's "in N node processes".
    output = re.sub(
        r"│ (worker start-up seconds|elapsed seconds|files per second) .*\n", "", output
    )
    return output.replace(" in 2 node processes", "")


def test_the_command_line_with_processes_prints_the_same_summary(tree: Path) -> None:
    local = run_main(tree)
    spread = run_main(tree, "--processes", "2")
    assert "600" in local
    assert spread == local
    assert run_main(tree, "--processes", "2", "--durable") == local
