"""``python -m actors.node``'s bad options: an argparse error naming the
option and exit status 2, checked before anything connects; a server that
cannot be reached or a module that cannot be imported: a one-line error and
exit status 1, no traceback. ``main`` runs in the test's process (a child
process per case would cost a second each), on each backend where it runs a
loop."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from actors.nats import NatsServer
from actors.node._run import main
from actors.remote import TrustedBrokerWarning

#: A port nobody listens on: reaching the network fails at once (and a check
#: that ran too late would show up as the --connect error instead).
_NOWHERE = "nats://127.0.0.1:1"


def _exit_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(["--connect", _NOWHERE, *argv])
    code = exited.value.code
    assert isinstance(code, int)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--grace", "-1"], "argument --grace: must be a finite number"),
        (["--grace", "nan"], "argument --grace: must be a finite number"),
        (["--grace", "inf"], "argument --grace: must be a finite number"),
        (["--grace", "soon"], "argument --grace: not a number of seconds"),
        (["--name", ""], "argument --name: node must be"),
        (["--name", "a.b"], "argument --name: node must be"),
        (["--system", "bad sys"], "argument --system: system must be"),
        (["--prefix", "a b"], "argument --prefix: prefix must be"),
        (["--share", "0"], "argument --share: share must be"),
    ],
)
def test_a_bad_option_is_an_argparse_error_naming_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code, err = _exit_of(capsys, *argv)
    assert code == 2, err
    assert said in err, err
    assert "Traceback" not in err and err.startswith("usage:"), err


def test_a_module_that_cannot_be_imported_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = _exit_of(capsys, "--module", "no_such_module_anywhere.inner")
    assert code == 1
    assert err.splitlines() == [
        "python -m actors.node: error: --module: cannot import: "
        "No module named 'no_such_module_anywhere'"
    ]


@pytest.mark.parametrize(
    ("source", "spec", "said"),
    [
        (
            None,
            "no_such_module_anywhere:serve",
            "No module named 'no_such_module_anywhere'",
        ),
        ("x = 1\n", "{path}:serve", "has no 'serve'"),
        (
            "serve = 1\n",
            "{path}:serve",
            "TypeError: {path}:serve: serve is not callable",
        ),
        ("1 / 0\n", "{path}:serve", "ZeroDivisionError: division by zero"),
        ("def broken(:\n", "{path}:serve", "SyntaxError: "),
        (None, "no_attribute_named", "ValueError: an app is MODULE:ATTR"),
    ],
)
def test_an_app_that_cannot_be_loaded_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    source: str | None,
    spec: str,
    said: str,
) -> None:
    path = tmp_path / "the_app.py"
    if source is not None:
        path.write_text(source)
    code, err = _exit_of(capsys, "--app", spec.format(path=path))
    assert code == 1, err
    [line] = err.splitlines()
    assert line.startswith(
        f"python -m actors.node: error: --app {spec.format(path=path)}: "
    ), line
    assert said.format(path=path) in line, line


@pytest.mark.parametrize("backend", ["asyncio", "uvloop", "trio"])
def test_a_server_that_cannot_be_reached_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    code, err = _exit_of(capsys, "--backend", backend)
    assert code == 1
    [line] = err.splitlines()
    assert line.startswith("python -m actors.node: error: --connect: "), err
    assert _NOWHERE in line, err


def test_the_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the system's name (default: actors)" in out
    assert "when leaving (default: 10.0)" in out


_BOMB = """
import anyio
from actors import Actor, ActorSystem
from actors.remote import Remote


class Work(Actor):
    def receive(self, message):
        return message


async def main():
    async with ActorSystem(remote=Remote({url!r}, system="bomb")) as system:
        system.remote.spawn_pool(Work, processes=1)


anyio.run(main)  # no __main__ guard: a node process importing it runs it
"""


def test_a_module_that_starts_node_processes_as_it_is_imported_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, nats_server: NatsServer
) -> None:
    # Each node process would import it and start more, without end (a fork
    # bomb): the node refuses at once, naming the guard that is missing.
    path = tmp_path / "bomb.py"
    path.write_text(_BOMB.format(url=nats_server.url))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrustedBrokerWarning)
        code, err = _exit_of(capsys, "--module", str(path))
    assert code == 1, err
    [line] = err.splitlines()
    assert (
        "RuntimeError: node processes cannot start while this process imports" in line
    )
    assert "if __name__ == '__main__':" in line
    assert "bomb" not in sys.modules
