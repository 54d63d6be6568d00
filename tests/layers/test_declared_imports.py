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
        "actors.sharding",
        "actors.sharding.lowlevel",
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


# A missing optional dependency names its extra, never a bare
# ModuleNotFoundError for a module the user never asked for.


@pytest.mark.parametrize("module", ["actors.remote", "actors.node"])
def test_the_remote_layer_without_msgspec_names_the_remote_extra(module: str) -> None:
    out = _run(
        "try:\n"
        f"    import {module}\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, '|', exc)\n"
    )
    name, _, message = out.partition("|")
    assert name.strip() == "msgspec"
    assert 'pip install "anyio-actors[remote]"' in message


def test_the_node_s_uvloop_backend_without_uvloop_names_the_uvloop_extra() -> None:
    out = _run(
        "from actors._extras import import_extra\n"
        "try:\n"
        "    import_extra('uvloop', 'uvloop', '--backend uvloop')\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    assert "needs uvloop, which is not installed" in out
    assert 'pip install "anyio-actors[uvloop]"' in out


def test_an_installed_module_whose_own_import_fails_keeps_its_error() -> None:
    # import_extra names the extra only for the module itself: a module that
    # is there but imports something missing raises what really failed.
    out = _run(
        "import sys, types\n"
        "from actors._extras import import_extra\n"
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'present':\n"
        "            import importlib.util, importlib.abc\n"
        "            class Loader(importlib.abc.Loader):\n"
        "                def create_module(self, spec): return None\n"
        "                def exec_module(self, module): import absent_dep\n"
        "            return importlib.util.spec_from_loader(name, Loader())\n"
        "sys.meta_path.insert(0, Finder())\n"
        "try:\n"
        "    import_extra('present', 'remote', 'x')\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name)\n"
    )
    assert out.strip() == "absent_dep"


@pytest.mark.parametrize(
    ("example", "extra"),
    [("fan_out", "examples"), ("ping_pong", "uvloop"), ("supervision", "uvloop")],
)
def test_an_example_without_its_extra_names_it(example: str, extra: str) -> None:
    path = HERE.parents[1] / "examples" / f"{example}.py"
    command = [sys.executable, str(ONLY_DECLARED), "--", str(path)]
    if extra == "uvloop":
        command += ["--backend", "uvloop"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode != 0
    assert f'pip install "anyio-actors[{extra}]"' in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
