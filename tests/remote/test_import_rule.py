"""Imports only go down: the runtime never imports the remote layer."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_runtime_does_not_import_the_remote_layer() -> None:
    code = (
        "import sys, actors, actors.mailbox, actors.channel; "
        "assert not [m for m in sys.modules if m.startswith('actors.remote')], "
        "sorted(m for m in sys.modules if m.startswith('actors.remote'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
