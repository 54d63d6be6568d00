"""Scheduler-exact waits (as tests/runtime/_support.py): no sleeps."""

from __future__ import annotations

import sniffio

from actors.testing import wait_all_blocked as wait_all_blocked


def on_asyncio() -> bool:
    """Whether the running event loop is asyncio (or uvloop)."""
    return sniffio.current_async_library() == "asyncio"


