"""The package imports nothing its base install does not declare.

pytest imports ``actors.testing.plugin`` (entry point ``pytest11``) in every
session of every environment where anyio-actors is installed, so an import of
an undeclared module there breaks every pytest run in that environment, also of
projects that never use the kit. Each check runs a fresh interpreter in which
every module outside the standard library and the declared dependencies
(``_only_declared.py``) is missing, as in ``pip install anyio-actors pytest``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ONLY_DECLARED = HERE / "_only_declared.py"


def _run(code: str, *dists: str, cwd: Path | None = None) -> str:
    command = [sys.executable, str(ONLY_DECLARED)]
    for dist in dists:
        command += ["--with", dist]
    command += ["--", "-c", code]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_refusing_finder_makes_an_undeclared_module_missing() -> None:
    # The harness itself: it would not prove anything if it let trio through.
    out = _run(
        "import importlib.util\n"
        "try:\n    import trio\nexcept ImportError:\n    print('missing')\n"
    )
    assert out.strip() == "missing"


@pytest.mark.parametrize(
    "module",
    [
        "actors",
        "actors.channel",
        "actors.channel.lowlevel",
        "actors.mailbox",
        "actors.testing",
        "actors.persistence",
        "actors.persistence.testing",
    ],
)
def test_the_base_packages_import_with_only_declared_dependencies(
    module: str,
) -> None:
    _run(f"import {module}")


def test_the_pytest_plugin_imports_with_only_pytest_added() -> None:
    _run("import actors.testing.plugin", "pytest")


def test_the_kit_fixtures_run_on_asyncio_with_only_declared_dependencies(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent(
            """
            import pytest

            from actors import Actor


            class Echo(Actor):
                def receive(self, message):
                    return message


            def test_arithmetic():
                assert 1 + 1 == 2


            @pytest.mark.anyio
            async def test_fixtures(actor_system, probe):
                echo = actor_system.spawn(Echo)
                assert await echo.ask("hi", timeout=5) == "hi"
                probe.watch(echo)
                echo.stop()
                await probe.expect_terminated(echo)
            """
        )
    )
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef anyio_backend():\n"
        "    return 'asyncio'\n"
    )
    out = _run(
        "import sys, pytest\n"
        "sys.exit(pytest.main(['-q', '-p', 'anyio', '-p', 'actors.testing.plugin',"
        " '-p', 'no:cacheprovider',"
        " '-W', 'error::pytest.PytestUnraisableExceptionWarning',"
        " 'test_user.py']))\n",
        "pytest",
        cwd=tmp_path,
    )
    assert "2 passed" in out, out


def test_the_persistence_plugin_imports_with_only_pytest_added() -> None:
    _run("import actors.persistence.testing.plugin", "pytest")


def test_persistence_needs_msgspec_only_for_a_codec_and_says_which_extra() -> None:
    # The SQLite and memory journals work on the base install; a codec (what
    # an actor's events go through) names the extra to install.
    out = _run(
        "import sys, tempfile, os, anyio\n"
        "from actors.persistence import Codec, MemoryJournal, SqliteJournal\n"
        "from actors.persistence import StoredEvent\n"
        "assert 'msgspec' not in sys.modules\n"
        "async def main():\n"
        "    path = os.path.join(tempfile.mkdtemp(), 'j.db')\n"
        "    async with SqliteJournal(path) as journal:\n"
        "        event = StoredEvent('p', 1, 'e@1', b'x', 'w', 0.0)\n"
        "        await journal.append('p', [event], 0)\n"
        "        assert await journal.read_events('p', 1) == [event]\n"
        "anyio.run(main)\n"
        "try:\n    Codec()\nexcept ImportError as exc:\n    print(exc)\n"
    )
    assert "anyio-actors[persistence]" in out
