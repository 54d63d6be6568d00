"""Revisions to compare: a git worktree and a virtualenv per commit.

Each commit gets ``benchmarks/.compare/<commit[:12]>/`` (git-ignored) holding
``src/``, a detached git worktree of the commit, and ``venv/``, a virtualenv with
that worktree installed (``pip install -e 'src[test]'``). The virtualenv is
reused while the commit hash recorded in it matches; remove the whole directory
(then ``git worktree prune``) to get rid of it.

A round runs the worktree's own harness (``python -m benchmarks run --rounds 1
... --output STEM``) with the virtualenv's interpreter, in the worktree, and
returns its JSON report, after checking that the report measured that commit's
``actors`` and not some other checkout's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["COMPARE_DIR", "Checkout", "CheckoutError", "prepare", "resolve"]

REPO: Final = Path(__file__).resolve().parent.parent
#: Where worktrees, virtualenvs and the reports of compare runs live.
COMPARE_DIR: Final = REPO / "benchmarks" / ".compare"
#: The file in a virtualenv naming the commit installed into it.
_MARKER: Final = "anyio-actors-commit"
#: Environment variables that would make a subprocess import the wrong code.
_SCRUBBED: Final = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")


class CheckoutError(Exception):
    """A revision could not be resolved, checked out, installed or run."""


@dataclass(frozen=True, slots=True)
class Checkout:
    """One revision, checked out and installed."""

    label: str  #: ``base`` or ``candidate``
    spec: str  #: the revision as the user typed it
    commit: str  #: the full commit hash
    root: Path  #: the worktree
    python: Path  #: the virtualenv's interpreter
    #: whether its harness takes ``--clock`` (older ones time on the wall clock)
    has_clock_option: bool = True

    @property
    def short(self) -> str:
        return self.commit[:12]

    def run_round(self, options: Sequence[str], stem: Path) -> dict[str, Any]:
        """Run one round of the worktree's harness; return its JSON report.

        Args:
            options: ``python -m benchmarks run`` options (without ``--output``).
            stem: where the report goes (``STEM.json``, ``STEM.md``).

        Raises:
            CheckoutError: the harness exited with neither 0 nor 1 (1 means some
                row failed, which the report says), wrote no report, or
                measured another checkout than this one.
        """
        command = [
            str(self.python), "-m", "benchmarks", "run", "--rounds", "1",
            *options, "--output", str(stem), "--no-chart",
        ]  # fmt: skip
        done = subprocess.run(
            command,
            cwd=self.root,
            env=_clean_environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        json_path = stem.with_name(stem.name + ".json")
        if done.returncode not in (0, 1) or not json_path.exists():
            raise CheckoutError(
                f"{self.label} ({self.short}) `{' '.join(command[1:])}` exited "
                f"with status {done.returncode}:\n{_tail(done.stderr)}"
            )
        report: dict[str, Any] = json.loads(json_path.read_text("utf-8"))
        self._check_measured(report)
        return report

    def _check_measured(self, report: dict[str, Any]) -> None:
        env = report.get("environment", {})
        commit = (env.get("git") or {}).get("commit")
        imported = env.get("actors_imported_from")
        expected = str((self.root / "actors").resolve())
        if commit != self.commit or (imported is not None and imported != expected):
            raise CheckoutError(
                f"{self.label}: the report measured commit {commit} with actors "
                f"from {imported}, not {self.commit} from {expected}"
            )


Progress = Callable[[str], None]


def resolve(spec: str) -> str:
    """The full commit hash of a revision (``HEAD~2``, a branch, a hash).

    Raises:
        CheckoutError: git does not know it, or it has no benchmark harness.
    """
    try:
        commit = _git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    except CheckoutError:
        raise CheckoutError(f"{spec!r} is not a commit in {REPO}") from None
    try:
        _git("cat-file", "-e", f"{commit}:benchmarks/__main__.py")
    except CheckoutError:
        raise CheckoutError(
            f"{spec} ({commit[:12]}) has no benchmark harness "
            "(benchmarks/__main__.py): compare needs it in both revisions"
        ) from None
    return commit


def prepare(label: str, spec: str, commit: str, progress: Progress) -> Checkout:
    """Check a commit out into its worktree and install it into its virtualenv.

    Both are reused when they already hold this commit.

    Raises:
        CheckoutError: git or pip failed.
    """
    home = COMPARE_DIR / commit[:12]
    root, venv = home / "src", home / "venv"
    python = venv / "bin" / "python"
    if not _is_worktree_of(root, commit):
        progress(f"{label}: checking out {commit[:12]} into {_shown(root)}")
        _git("worktree", "prune")
        if root.exists():
            _git("worktree", "remove", "--force", str(root), check=False)
            shutil.rmtree(root, ignore_errors=True)
        _git("worktree", "add", "--detach", str(root), commit)
    marker = venv / _MARKER
    if python.exists() and marker.exists() and marker.read_text().strip() == commit:
        progress(f"{label}: reusing {_shown(venv)} ({commit[:12]})")
    else:
        progress(f"{label}: installing {commit[:12]} into {_shown(venv)} (pip)")
        shutil.rmtree(venv, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)], "python -m venv")
        _run(
            [str(python), "-m", "pip", "install", "--quiet", "-e", f"{root}[test]"],
            "pip install",
        )
        marker.write_text(commit + "\n", "utf-8")
    cli = _git("show", f"{commit}:benchmarks/_cli.py", check=False)
    return Checkout(label, spec, commit, root, python, '"--clock"' in cli)


def _is_worktree_of(root: Path, commit: str) -> bool:
    if not (root / ".git").exists():
        return False
    try:
        head = _git("-C", str(root), "rev-parse", "HEAD")
        dirty = _git("-C", str(root), "status", "--porcelain", "--untracked-files=no")
    except CheckoutError:
        return False
    return head == commit and not dirty


def _git(*args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True
    )
    if check and done.returncode != 0:
        raise CheckoutError(f"git {' '.join(args)} failed:\n{_tail(done.stderr)}")
    return done.stdout.strip()


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(
        command, capture_output=True, text=True, env=_clean_environment()
    )
    if done.returncode != 0:
        raise CheckoutError(f"{what} failed:\n{_tail(done.stderr or done.stdout)}")


def _clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _SCRUBBED}


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
