"""Where a run happened: machine, Python, package versions, git revision."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["environment"]

#: Distributions whose versions go into every result file.
PACKAGES = ("anyio-actors", "anyio", "sniffio", "trio", "uvloop", "pykka", "matplotlib")

_REPO = Path(__file__).resolve().parent.parent


def environment() -> dict[str, Any]:
    """A JSON-ready description of the machine and software running the suite."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "machine": {
            "platform": platform.platform(),
            "arch": platform.machine(),
            "cpu": _cpu_model(),
            "cpus": os.cpu_count(),
            "load_average_at_start": list(load) if load else None,  # 1, 5, 15 min
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "build": " ".join(platform.python_build()),
            "compiler": platform.python_compiler(),
            "executable": sys.executable,
        },
        "packages": {name: _version(name) for name in PACKAGES},
        "actors_imported_from": _actors_path(),
        "git": _git(),
    }


def _actors_path() -> str | None:
    # Which checkout is measured: the editable install or the current directory.
    try:
        import actors
    except ImportError:
        return None
    return str(Path(actors.__file__).resolve().parent)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git() -> dict[str, Any] | None:
    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(_REPO), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip()

    try:
        changes = git("status", "--porcelain", "--", "actors").splitlines()
        return {
            "commit": git("rev-parse", "HEAD"),
            # Uncommitted edits to the code under test make the commit a lie;
            # new untracked modules are listed but do not count as edits.
            "actors_modified": any(not c.startswith("??") for c in changes),
            "actors_changes": changes,
        }
    except (OSError, subprocess.SubprocessError):
        return None
