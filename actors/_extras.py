"""Optional dependencies: a missing one is named with the extra that brings it.

The base install is anyio and opentelemetry-api. Everything else comes with an
extra of ``pyproject.toml`` (``trio``, ``uvloop``, ``remote``, ``server``,
``examples``), and the error a missing one raises says which:
``pip install "anyio-actors[remote]"``, never a bare ``ModuleNotFoundError``
for a module the user never asked for by name.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_extra", "missing_extra"]


def missing_extra(module: str, extra: str, needed_by: str) -> ModuleNotFoundError:
    """The error for ``module`` missing, naming the extra that installs it.

    Args:
        module: the importable name (``"msgspec"``).
        extra: the extra of anyio-actors that brings it (``"remote"``).
        needed_by: what needs it, for the message (``"actors.remote"``).

    Returns:
        A ``ModuleNotFoundError`` (an ``ImportError``) whose ``name`` is
        ``module``, for the caller to raise.
    """
    return ModuleNotFoundError(
        f"{needed_by} needs {module}, which is not installed: "
        f'pip install "anyio-actors[{extra}]"',
        name=module,
    )


def import_extra(module: str, extra: str, needed_by: str) -> ModuleType:
    """Import ``module``, or raise [``missing_extra``][actors._extras.missing_extra]'s
    error if it (or a package it is in) is not installed.

    Raises:
        ModuleNotFoundError: ``module`` is not installed; the message names
            ``pip install "anyio-actors[<extra>]"``. A module that is installed
            but fails to import raises its own error unchanged.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing != module and not module.startswith(missing + "."):
            raise  # the module is there; something it imports is not
        raise missing_extra(module, extra, needed_by) from exc
