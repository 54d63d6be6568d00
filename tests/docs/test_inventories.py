"""scripts/docs_inventories.py: without a network, the inventories the
reference links anyio and OpenTelemetry through are written from the
installed packages, in the layout of those projects' API pages."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]


def _entries(path: Path) -> dict[str, tuple[str, str]]:
    data = path.read_bytes()
    assert data.startswith(b"# Sphinx inventory version 2\n")
    lines = zlib.decompress(data.split(b"zlib.\n", 1)[1]).decode().splitlines()
    out = {}
    for line in lines:
        name, role, _priority, uri, _display = line.split(" ", 4)
        out[name] = (role, uri.replace("$", name))
    return out


def test_offline_inventories_link_the_names_the_reference_uses(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "docs_inventories.py"),
            "--offline",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    exports = dict(
        line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines()
    )
    assert set(exports) == {
        f"ACTORS_DOCS_INVENTORY_{key}{suffix}"
        for key in ("PYTHON", "ANYIO", "OPENTELEMETRY")
        for suffix in ("", "_BASE")
    }
    anyio = _entries(Path(urlparse(exports["ACTORS_DOCS_INVENTORY_ANYIO"]).path))
    assert anyio["anyio.abc.ObjectSendStream"] == (
        "py:class",
        "api.html#anyio.abc.ObjectSendStream",
    )
    assert anyio["anyio.create_task_group"][0] == "py:function"
    assert anyio["anyio.EndOfStream"][0] == "py:exception"
    assert not [name for name in anyio if name.startswith("anyio.annotations")]
    otel = _entries(Path(urlparse(exports["ACTORS_DOCS_INVENTORY_OPENTELEMETRY"]).path))
    assert otel["opentelemetry.trace.TracerProvider"] == (
        "py:class",
        "api/trace.html#opentelemetry.trace.TracerProvider",
    )
    assert otel["opentelemetry.sdk.metrics.export.InMemoryMetricReader"][1] == (
        "sdk/metrics.export.html#opentelemetry.sdk.metrics.export.InMemoryMetricReader"
    )
    assert exports["ACTORS_DOCS_INVENTORY_ANYIO_BASE"] == (
        "https://anyio.readthedocs.io/en/stable/"
    )
    # The standard library's: Debian's python3-doc when installed, else an
    # empty one (the script says so).
    python = _entries(Path(urlparse(exports["ACTORS_DOCS_INVENTORY_PYTHON"]).path))
    if python:
        assert python["typing.Any"][1].endswith("library/typing.html#typing.Any")
    else:
        assert "EMPTY" in done.stderr
