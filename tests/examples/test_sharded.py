"""examples/sharded.py: a sharded account service over three node processes
survives SIGKILL of one of them: every account answers again from the others
(recovered from the journal) and its balance is exactly the deposits
acknowledged to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(180)
def test_the_sharded_account_service_survives_a_killed_node() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "sharded.py"),
            "--nodes=3",
            "--accounts=20",
            "--seconds=2",
            "--kill-after=0.5",
            "--lease=1",
        ],
        cwd=ROOT,  # the node processes run `python -m actors.node` from here
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "killed node pid" in done.stdout
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("survived: 3 nodes, 1 killed, 20 accounts"), last
    assert last.endswith("lost 0"), last
    deposits = int(last.split(" deposits acknowledged")[0].rsplit(" ", 1)[1])
    assert deposits > 20
