"""The README's quickstart runs as written, on every backend."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def quickstart_code() -> str:
    """The first ```python block under the README's "## Quickstart" heading."""
    text = README.read_text(encoding="utf-8")
    heading = re.search(r"^## Quickstart[ \t]*$", text, re.MULTILINE)
    assert heading is not None, "README.md has no '## Quickstart' section"
    section = text[heading.end() :]
    following = re.search(r"^## ", section, re.MULTILINE)
    if following is not None:
        section = section[: following.start()]
    block = re.search(r"^```python[ \t]*\n(.*?)^```[ \t]*$", section, re.M | re.S)
    assert block is not None, "the Quickstart section has no ```python block"
    return block.group(1)


def uvloop_options() -> dict[str, Any]:
    import uvloop

    return {"loop_factory": uvloop.new_event_loop}


@pytest.mark.parametrize(
    ("backend", "options"),
    [
        pytest.param("asyncio", dict, id="asyncio"),
        pytest.param("asyncio", uvloop_options, id="uvloop"),
        pytest.param("trio", dict, id="trio"),
    ],
)
def test_the_readme_quickstart_runs(
    backend: str,
    options: Callable[[], dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = quickstart_code()
    assert "anyio.run(main" in code
    real_run = anyio.run
    ran: list[str] = []

    # The snippet calls anyio.run(main); run it on the backend under test.
    def run(func: Callable[[], Any], *args: Any, **kwargs: Any) -> Any:
        ran.append(func.__name__)
        return real_run(func, *args, backend=backend, backend_options=options())

    monkeypatch.setattr(anyio, "run", run)
    # A real module: dataclasses look their module up in sys.modules.
    module = types.ModuleType("readme_quickstart")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(README), "exec"), module.__dict__)  # asserts must hold
    assert ran == ["main"]
