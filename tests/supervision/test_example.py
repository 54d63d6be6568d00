"""examples/supervision.py runs on every backend and tells the same story."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "supervision.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_supervision", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


example = _load()


@pytest.mark.anyio
async def test_the_example_restarts_resumes_and_escalates_as_configured(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = await example.run(60, 7)
    assert counts == {
        "jobs": 60,
        "succeeded": 49,
        "failures": 13,  # 11 jobs, and the dispatcher twice
        "restarts": 8,  # 6 workers, and the dispatcher twice
        "escalations": 2,
        "gave up": None,
    }
    out = capsys.readouterr().out
    assert out.count("  escalation: supervisor /user/dispatcher exceeded") == 2
    # 11 failed jobs: 3 resumed, 6 restarted, 2 that exceeded the intensity
    assert out.count(": resume /user/dispatcher/worker-") == 3
    assert out.count(": restart /user/dispatcher/worker-") == 8
    assert out.count("dispatcher: worker-") == 6  # Terminated, 3 per escalation


@pytest.mark.anyio
async def test_the_example_surfaces_the_failure_when_the_guardian_gives_up() -> None:
    counts = await example.run(200, 1)
    assert isinstance(counts["gave up"], ValueError)
    assert counts["escalations"] == 12  # 11 by the dispatcher, 1 by the guardian


def test_the_example_prints_the_same_story_on_every_backend() -> None:
    outputs = {
        backend: subprocess.run(
            [sys.executable, str(EXAMPLE), "--backend", backend],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        for backend in ("asyncio", "uvloop", "trio")
    }
    assert outputs["asyncio"] == outputs["uvloop"] == outputs["trio"]
    assert outputs["trio"].splitlines()[-1] == (
        "49 of 60 jobs succeeded; failures: 13, restarts: 8, escalations: 2"
    )
