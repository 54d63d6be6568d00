"""Every example the documentation shows runs and does what the page says.

The pages include their code from files under ``docs_src/`` with
pymdownx.snippets (``--8<-- "docs_src/topic/name.py"``), so what a reader sees
is what runs here: each file's ``main()`` on every backend it claims (a line
``# backends: asyncio, trio`` near the top; default: asyncio, uvloop and trio).
When a page shows the output, it includes ``name.txt`` beside the example, and
the output must be exactly that. Files are collected when the tests are, so a
new example is run without touching this module.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS_SRC = ROOT / "docs_src"
BACKENDS = ("asyncio", "uvloop", "trio")
_CLAIM = re.compile(r"^# backends:(.*)$", re.MULTILINE)
# How every example ends: runnable as a script (a trailing comment is allowed).
_TRAILER = re.compile(
    r'\n\nif __name__ == "__main__":\n    anyio\.run\(main\)(  # .*)?\n\Z'
)


def example_files() -> list[Path]:
    """Every example: a ``.py`` file under docs_src/ whose name has no leading _."""
    return sorted(
        path for path in DOCS_SRC.rglob("*.py") if not path.name.startswith("_")
    )


def claimed_backends(path: Path) -> tuple[str, ...]:
    """The backends an example says it runs on (all three unless it says)."""
    match = _CLAIM.search(path.read_text())
    if match is None:
        return BACKENDS
    claimed = tuple(name.strip() for name in match[1].split(",") if name.strip())
    unknown = set(claimed) - set(BACKENDS)
    assert claimed and not unknown, f"{path}: unknown backends {sorted(unknown)}"
    return claimed


def _name(path: Path) -> str:
    return path.relative_to(DOCS_SRC).with_suffix("").as_posix()


def _cases() -> list[Any]:
    return [
        pytest.param(path, backend, id=f"{_name(path)}-{backend}")
        for path in example_files()
        for backend in claimed_backends(path)
    ]


def _load_main(path: Path) -> Callable[[], Coroutine[Any, Any, None]]:
    module_name = "docs_src_" + _name(path).replace("/", "_")
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs: dataclasses and msgspec look their module up.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    main: Callable[[], Coroutine[Any, Any, None]] = module.main
    return main


def _run(main: Callable[[], Coroutine[Any, Any, None]], backend: str) -> None:
    if backend == "uvloop":
        import uvloop

        options = {"loop_factory": uvloop.new_event_loop}
        anyio.run(main, backend="asyncio", backend_options=options)
    else:
        anyio.run(main, backend=backend)


@pytest.mark.parametrize(("path", "backend"), _cases())
def test_the_example_runs_and_prints_what_its_page_shows(
    path: Path, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # As `python docs_src/topic/name.py` would: its folder on sys.path, so an
    # example may import a helper module beside it (named with a leading _).
    sys.path.insert(0, str(path.parent))
    try:
        _run(_load_main(path), backend)
    finally:
        sys.path.remove(str(path.parent))
        sys.modules.pop("docs_src_" + _name(path).replace("/", "_"), None)
    expected = path.with_suffix(".txt")
    if expected.exists():
        assert capsys.readouterr().out == expected.read_text()


@pytest.mark.parametrize("path", example_files(), ids=_name)
def test_the_example_is_a_program_with_an_async_main(path: Path) -> None:
    text = path.read_text()
    assert "\nasync def main() -> None:\n" in text, (
        f"{path}: no `async def main() -> None`"
    )
    assert _TRAILER.search(text), (
        f'{path}: must end with\nif __name__ == "__main__":\n    anyio.run(main)'
    )


def test_there_are_examples() -> None:
    # A wrong DOCS_SRC would otherwise collect nothing and pass.
    assert len(example_files()) >= 10
