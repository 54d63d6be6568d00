"""examples/traced_pipeline.py runs, and each request is one trace."""

from __future__ import annotations

import importlib.util
import io
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "traced_pipeline.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_traced_pipeline", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


pipeline = _load()
LINE = re.compile(r"trace=(\w+) span=(\w+) parent=([\w-]+)\s+(.+?)\s{2,}(.*)$")


def _spans(text: str) -> list[tuple[str, str, str, str, str]]:
    return [
        match.groups()  # type: ignore[misc]
        for line in text.splitlines()
        if (match := LINE.match(line.rstrip() + "  "))
    ]


@pytest.mark.anyio
async def test_each_request_is_one_trace_through_the_three_stages() -> None:
    out = io.StringIO()
    totals = await pipeline.traced_pipeline(["a b a", "", "b c"], out)
    assert totals == {"a": 2, "b": 2, "c": 1}
    spans = _spans(out.getvalue())
    by_trace: dict[str, list[str]] = {}
    for trace, _, _, name, _ in spans:
        by_trace.setdefault(trace, []).append(name)
    stages = ["process Count", "process Store", "process Tokenize"]
    traces = sorted(sorted(names) for names in by_trace.values())
    assert traces == sorted(
        [
            sorted(["request 1", *stages]),
            ["process Tokenize", "request 2"],  # the rejected empty line
            sorted(["request 3", *stages]),
            ["ask Store", "process Store", "report"],
        ]
    )
    (failed,) = [s for s in spans if "outcome=error" in s[4]]
    assert "events=exception,actor.dead_letter,actor.restart" in failed[4]


def test_the_command_line_prints_spans_and_totals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pipeline.main(["--requests", "2", "--backend", "trio"])
    out = capsys.readouterr().out
    assert len(_spans(out)) == 2 * 4 + 3  # 2 requests of 4 spans, the report
    assert "most common words: " in out


def test_the_command_line_can_print_the_exporters_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pipeline.main(["--requests", "1", "--json", "--backend", "uvloop"])
    out = capsys.readouterr().out
    assert out.count('"name": "process ') == 4  # 3 stages, the report
    assert out.count('"messaging.destination.name": "/user/') == 4 + 1  # + an ask
    assert '"messaging.system": "anyio-actors"' in out
    assert '"service.name": "traced-pipeline"' in out
