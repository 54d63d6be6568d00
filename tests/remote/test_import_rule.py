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


def test_the_remote_layer_uses_only_the_channel_mailbox_and_public_runtime() -> None:
    # Relative imports that leave actors.remote may reach actors.channel,
    # actors.mailbox, actors.nats, the runtime's public face (``from ...
    # import X``) and its plug-in interface (actors.extension), never a
    # private runtime module: the runtime is free to move those.
    import ast
    from pathlib import Path

    import actors.remote

    root = Path(actors.remote.__file__).parent
    allowed = ("channel", "extension", "mailbox", "nats", "remote")
    bad = []
    for path in root.rglob("*.py"):
        depth = len(path.relative_to(root).parts)  # 1: actors/remote/x.py
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level > depth:
                    target = (node.module or "").split(".")[0]
                    if target not in ("", *allowed):
                        bad.append(f"{path.relative_to(root)}: {node.module}")
                continue
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "actors" and len(parts) > 1 and parts[1] not in allowed:
                    bad.append(f"{path.relative_to(root)}: {name}")
    assert not bad, bad
