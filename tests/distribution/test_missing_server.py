"""``Remote(url=None)`` without the ``server`` extra names it."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

from actors import ActorSystem

pytest.importorskip("msgspec")
from actors.remote import Remote

pytestmark = pytest.mark.anyio


async def test_an_embedded_server_without_the_binary_names_the_server_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Nowhere to find nats-server: not beside the interpreter, not in the
    # scripts directories, not on PATH, no override.
    monkeypatch.delenv("ACTORS_NATS_SERVER", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(sysconfig, "get_path", lambda *args, **kwargs: str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(FileNotFoundError, match=r"anyio-actors\[server\]"):
        async with ActorSystem(remote=Remote(url=None)):
            pass
