#!/usr/bin/env python3
"""The Sphinx inventories the API reference links the standard library, anyio
and OpenTelemetry through (mkdocstrings' ``inventories``, see mkdocs.yml).

Prints shell ``export`` lines for ``./scripts/docs`` and ``.ci/run`` to
``eval``: for each project, the inventory's URL (``ACTORS_DOCS_INVENTORY_X``)
and the site its links point at (``..._BASE``). Without them mkdocs.yml
downloads the projects' own inventories from their sites.

Where each one comes from, first that works:

1. The project's own ``objects.inv``, downloaded (5 s at most): what its
   site has today.
2. The standard library only: the inventory Debian's ``python3.X-doc``
   package installs with the HTML documentation of the running Python's
   minor version (``apt-get install python3.11-doc``), linked to
   ``docs.python.org/3.X/``: Sphinx's own file for that version.
3. anyio and OpenTelemetry: an inventory written here from the installed
   packages, the versions this project pins and documents against, in the
   layout of the projects' API pages (anyio: one page, ``api.html#<name>``;
   OpenTelemetry: a page per module, ``api/trace.html#<name>``,
   ``sdk/metrics.export.html#<name>``), linked to their current sites.
4. Otherwise an empty inventory, and a warning: those names stay plain text.

Nothing is committed: a build derives the inventories again, from the
network or from what is installed, so they cannot go stale in the
repository. The files go to ``build/inventories/`` (git-ignored), named
after their content's hash so mkdocs' one-day download cache never serves an
older one.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import shlex
import sys
import urllib.request
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent

PYTHON_SITE = "https://docs.python.org/3/"
ANYIO_SITE = "https://anyio.readthedocs.io/en/stable/"
OTEL_SITE = "https://opentelemetry-python.readthedocs.io/en/latest/"

#: anyio's public modules; its API reference documents them all on api.html.
ANYIO_MODULES = (
    "anyio",
    "anyio.abc",
    "anyio.from_thread",
    "anyio.to_thread",
    "anyio.to_process",
    "anyio.lowlevel",
    "anyio.streams.buffered",
    "anyio.streams.file",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "anyio.streams.text",
    "anyio.streams.tls",
)
#: OpenTelemetry's modules the reference can name, each on its own page.
OTEL_MODULES = (
    "opentelemetry.baggage",
    "opentelemetry.context",
    "opentelemetry.metrics",
    "opentelemetry.propagate",
    "opentelemetry.trace",
    "opentelemetry.sdk.metrics",
    "opentelemetry.sdk.metrics.export",
    "opentelemetry.sdk.metrics.view",
    "opentelemetry.sdk.resources",
    "opentelemetry.sdk.trace",
    "opentelemetry.sdk.trace.export",
)


def download(url: str, timeout: float) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data: bytes = response.read()
    except (OSError, ValueError):
        return None
    return data if data.startswith(b"# Sphinx inventory version 2") else None


def inventory(project: str, version: str, entries: Iterable[str]) -> bytes:
    """A Sphinx inventory (version 2) of ``name domain:role priority uri
    dispname`` lines."""
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body = "".join(f"{line}\n" for line in sorted(set(entries))).encode()
    return header + zlib.compress(body)


def _role(value: object) -> str | None:
    if inspect.isclass(value):
        return "exception" if issubclass(value, BaseException) else "class"
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return "function"
    if inspect.ismodule(value):
        return None
    return "data"


def public_entries(modules: Iterable[str], page: Callable[[str], str]) -> list[str]:
    """Inventory lines for the public names of ``modules`` as installed and
    the public members of their classes; ``page(module)`` is the page that
    documents a module's names, anchored by their full dotted name."""
    lines: list[str] = []
    for name in modules:
        try:
            module: ModuleType = importlib.import_module(name)
        except ImportError:
            continue
        uri = page(name)
        lines.append(f"{name} py:module 1 {uri}#module-{name} -")
        exported = getattr(module, "__all__", None)
        names = exported if exported is not None else dir(module)
        for attr in names:
            if attr.startswith("_"):
                continue
            value = getattr(module, attr, None)
            role = _role(value)
            if role is None:
                continue
            # What the module imported for itself (typing.Any, a __future__
            # feature) is not its API; data only if __all__ names it.
            home = getattr(value, "__module__", None) or ""
            ours = home.partition(".")[0] == name.partition(".")[0]
            if (role == "data" and exported is None) or (role != "data" and not ours):
                continue
            full = f"{name}.{attr}"
            lines.append(f"{full} py:{role} 1 {uri}#$ -")
            if inspect.isclass(value):
                for member, member_value in vars(value).items():
                    if member.startswith("_"):
                        continue
                    kind = (
                        "method"
                        if callable(member_value)
                        or isinstance(member_value, staticmethod | classmethod)
                        else "attribute"
                    )
                    lines.append(f"{full}.{member} py:{kind} 1 {uri}#$ -")
    return lines


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "0"


def anyio_from_installed() -> bytes:
    return inventory(
        "anyio", _version("anyio"), public_entries(ANYIO_MODULES, lambda _: "api.html")
    )


def _otel_page(module: str) -> str:
    rest = module.removeprefix("opentelemetry.")
    if rest.startswith("sdk."):
        return "sdk/" + rest.removeprefix("sdk.") + ".html"
    return f"api/{rest}.html"


def otel_from_installed() -> bytes:
    return inventory(
        "OpenTelemetry Python",
        _version("opentelemetry-api"),
        public_entries(OTEL_MODULES, _otel_page),
    )


def debian_python() -> tuple[bytes, str] | None:
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    path = Path(f"/usr/share/doc/python{minor}/html/objects.inv")
    if not path.is_file():
        return None
    return path.read_bytes(), f"https://docs.python.org/{minor}/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "inventories")
    parser.add_argument(
        "--offline", action="store_true", help="do not try the projects' sites"
    )
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    def fetch(site: str) -> bytes | None:
        return None if args.offline else download(site + "objects.inv", args.timeout)

    chosen: dict[str, tuple[bytes, str, str]] = {}
    data = fetch(PYTHON_SITE)
    if data is not None:
        chosen["PYTHON"] = (data, PYTHON_SITE, "downloaded")
    elif (found := debian_python()) is not None:
        chosen["PYTHON"] = (found[0], found[1], "Debian's python3-doc")
    else:
        chosen["PYTHON"] = (
            inventory("Python", "0", []),
            PYTHON_SITE,
            "EMPTY: no network and no python3.X-doc; standard-library names "
            "stay unlinked",
        )
    data = fetch(ANYIO_SITE)
    chosen["ANYIO"] = (
        (data, ANYIO_SITE, "downloaded")
        if data is not None
        else (anyio_from_installed(), ANYIO_SITE, "written from the installed anyio")
    )
    data = fetch(OTEL_SITE)
    chosen["OPENTELEMETRY"] = (
        (data, OTEL_SITE, "downloaded")
        if data is not None
        else (
            otel_from_installed(),
            OTEL_SITE,
            "written from the installed opentelemetry packages",
        )
    )
    for key, (data, base, how) in chosen.items():
        digest = hashlib.sha256(data).hexdigest()[:12]
        path = args.out / f"{key.lower()}-{digest}.inv"
        path.write_bytes(data)
        print(f"inventory {key.lower()}: {how} -> {base}", file=sys.stderr)
        print(f"export ACTORS_DOCS_INVENTORY_{key}={shlex.quote(path.as_uri())}")
        print(f"export ACTORS_DOCS_INVENTORY_{key}_BASE={shlex.quote(base)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
