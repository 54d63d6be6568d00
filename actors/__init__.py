"""anyio-actors: an actor runtime on anyio (asyncio, uvloop and Trio)."""

__all__: list[str] = []
