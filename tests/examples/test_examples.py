"""The examples run end to end and compute the right answers."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", EXAMPLES / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fan_out_example = _load("fan_out")
ping_pong_example = _load("ping_pong")


def _make_tree(root: Path) -> None:
    # Files of assorted shapes: empty, no trailing newline, binary, nested.
    (root / "a").mkdir()
    (root / "a" / "b").mkdir()
    (root / "empty.txt").write_bytes(b"")
    (root / "one.txt").write_bytes(b"one line without newline")
    (root / "a" / "poem.txt").write_bytes(b"roses are red\nviolets are blue\n\n")
    (root / "a" / "b" / "blob.bin").write_bytes(bytes(range(256)) * 40)
    for i in range(60):
        (root / "a" / "b" / f"f{i:02}.txt").write_bytes(
            ("word " * i + "\n").encode() * (i % 7)
        )


async def test_fan_out_totals_match_a_sequential_computation(tmp_path: Path) -> None:
    _make_tree(tmp_path)
    files = fan_out_example.list_files(str(tmp_path))
    expected_lines = expected_words = expected_bytes = 0
    digests = {}
    for path in files:
        data = Path(path).read_bytes()
        expected_lines += data.count(b"\n")
        expected_words += len(data.split())
        expected_bytes += len(data)
        digests[path] = hashlib.sha256(data).hexdigest()

    summary = await fan_out_example.fan_out(
        str(tmp_path), workers=4, drain=8, capacity=2
    )

    assert summary.files == len(files) == 64
    assert summary.failed == 0
    assert (summary.lines, summary.words, summary.bytes) == (
        expected_lines,
        expected_words,
        expected_bytes,
    )
    assert summary.digests == digests
    largest = sorted(((len(Path(p).read_bytes()), p) for p in files), reverse=True)[:5]
    assert summary.largest == largest


async def test_fan_out_with_one_worker_and_an_empty_tree(tmp_path: Path) -> None:
    summary = await fan_out_example.fan_out(str(tmp_path), workers=1)
    assert summary.files == 0 and summary.bytes == 0


async def test_fan_out_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workers"):
        await fan_out_example.fan_out(str(tmp_path), workers=0)
    with pytest.raises(ValueError, match="not a directory"):
        await fan_out_example.fan_out(str(tmp_path / "missing"))


async def test_ping_pong_completes_every_round_trip() -> None:
    elapsed = await ping_pong_example.ping_pong(pairs=3, rounds=500)
    assert elapsed > 0


def test_fan_out_command_line_prints_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _make_tree(tmp_path)
    fan_out_example.main([str(tmp_path), "--workers", "3", "--backend", "trio"])
    out = capsys.readouterr().out
    assert "files" in out and "64" in out and "five largest files" in out


def test_ping_pong_command_line_reports_the_rate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ping_pong_example.main(["--pairs", "2", "--rounds", "200", "--backend", "uvloop"])
    assert "round trips/s" in capsys.readouterr().out
