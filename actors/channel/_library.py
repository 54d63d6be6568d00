"""Which async library runs this thread's event loop (see
[``actors.channel.lowlevel``][actors.channel.lowlevel])."""

from __future__ import annotations

from types import ModuleType

__all__ = ["current_async_library"]

_sniffio: ModuleType | None
try:  # optional: anyio no longer requires it; Trio does
    import sniffio as _sniffio
except ImportError:  # no Trio installed either: only asyncio can be running
    _sniffio = None


def current_async_library() -> str:
    """Return the name of the async library running this thread's event loop:
    ``"asyncio"`` (uvloop included) or ``"trio"``.

    Works without sniffio installed (anyio no longer requires it; Trio does,
    so without it only asyncio can be running).

    Raises:
        RuntimeError: no event loop is running in this thread.
    """
    if _sniffio is None:
        import asyncio

        asyncio.get_running_loop()  # RuntimeError: no running event loop
        return "asyncio"
    try:
        name: str = _sniffio.current_async_library()
    except _sniffio.AsyncLibraryNotFoundError:
        raise RuntimeError(
            "no running event loop: this is called from async code"
        ) from None
    return name
