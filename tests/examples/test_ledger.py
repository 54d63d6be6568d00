"""examples/ledger.py: durable per-directory totals over the main job's
files; interrupted (SIGKILL, Ctrl-C) and run again, it ends with the totals of
an uninterrupted run."""

from __future__ import annotations

import hashlib
import importlib.util
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load() -> ModuleType:
    # As `python examples/ledger.py` would: its folder on sys.path (it
    # imports fan_out's file walk and counting).
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(
        "example_ledger", EXAMPLES / "ledger.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ledger_example = _load()


def _make_tree(root: Path, directories: int = 8, files: int = 40) -> dict[str, str]:
    """Files in several directories; returns each file's SHA-256."""
    digests = {}
    for d in range(directories):
        folder = root / f"dir{d}" / ("deep" if d % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(files):
            data = (f"line {d} {f}\n" * (f % 7) + "tail" * (d % 2)).encode()
            path = folder / f"f{f:02}.txt"
            path.write_bytes(data)
            digests[str(path)] = hashlib.sha256(data).hexdigest()
    return digests


def _expected(digests: dict[str, str]) -> tuple[int, int, int]:
    lines = words = size = 0
    for path in digests:
        data = Path(path).read_bytes()
        lines += data.count(b"\n")
        words += len(data.split())
        size += len(data)
    return lines, words, size


async def test_the_totals_match_a_sequential_count_and_a_rerun_counts_nothing(
    tmp_path: Path,
) -> None:
    digests = _make_tree(tmp_path / "tree")
    journal = str(tmp_path / "ledger.db")
    first = await ledger_example.ledger(str(tmp_path / "tree"), journal, workers=4)
    assert (first.files, first.resumed, first.counted) == (
        len(digests),
        0,
        len(digests),
    )
    assert (first.lines, first.words, first.bytes) == _expected(digests)
    assert first.digests == digests and first.directories == 8
    again = await ledger_example.ledger(str(tmp_path / "tree"), journal, workers=2)
    assert (again.resumed, again.counted) == (len(digests), 0)
    assert (again.lines, again.words, again.bytes, again.digests) == (
        first.lines,
        first.words,
        first.bytes,
        first.digests,
    )


async def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workers"):
        await ledger_example.ledger(str(tmp_path), str(tmp_path / "j.db"), workers=0)
    with pytest.raises(ValueError, match="not a directory"):
        await ledger_example.ledger(str(tmp_path / "missing"), str(tmp_path / "j.db"))


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_an_interrupted_run_resumed_ends_with_the_same_totals(
    tmp_path: Path, sig: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    digests = _make_tree(tmp_path / "tree", directories=10, files=60)
    journal = str(tmp_path / "ledger.db")
    command = [sys.executable, str(EXAMPLES / "ledger.py"), str(tmp_path / "tree")]
    child = subprocess.Popen(
        [*command, "--journal", journal, "--workers", "4", "--plain"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    stored = 0
    for line in child.stdout:  # "stored N/M": N files are in the journal
        assert line.startswith("stored "), line
        stored = int(line.split()[1].split("/")[0])
        if stored >= 150:
            child.send_signal(sig)
            break
    out, err = child.communicate(timeout=60)
    if sig == signal.SIGKILL:
        assert child.returncode == -signal.SIGKILL
    else:
        assert child.returncode == 130, err
        assert "interrupted: what was counted is in" in out
    for line in out.splitlines():
        if line.startswith("stored "):
            stored = int(line.split()[1].split("/")[0])
    assert 150 <= stored < len(digests)  # stopped part-way
    # The second run, from the command line as a user would.
    ledger_example.main(
        [str(tmp_path / "tree"), "--journal", journal, "--workers", "3"]
    )
    summary = capsys.readouterr().out
    lines, words, size = _expected(digests)
    assert (
        f"{size:,}" in summary and f"{lines:,}" in summary and f"{words:,}" in summary
    )
    table = {
        row.split("│")[1].strip(): row.split("│")[2].strip()
        for row in summary.splitlines()
        if row.count("│") == 3
    }
    resumed = int(table["counted by an earlier run"].replace(",", ""))
    counted = int(table["counted by this run"].replace(",", ""))
    assert resumed >= stored  # every file it reported stored, and no more counted twice
    assert resumed + counted == len(digests)
    assert table["bytes"] == f"{size:,}"
