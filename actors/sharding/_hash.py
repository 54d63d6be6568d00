"""The stable shard of an entity key: the same on every node, every process,
every run and every Python version.

Python's ``hash()`` of a ``str`` is salted per process (``PYTHONHASHSEED``), so
two nodes would disagree on where a key lives: never use it for placement.
This is a BLAKE2b digest of the key's UTF-8 bytes, read as an unsigned
integer, modulo the shard count (as Akka's ``HashCodeMessageExtractor`` with
a hash every JVM agrees on).
"""

from __future__ import annotations

import hashlib

__all__ = ["check_key", "shard_of"]

#: The longest key, in UTF-8 bytes (keys travel in envelopes and store keys).
MAX_KEY_BYTES = 1024


def check_key(key: object) -> str:
    """``key`` if it is a valid entity key, else an error naming what is wrong.

    Raises:
        TypeError: ``key`` is not a ``str``.
        ValueError: ``key`` is empty or longer than 1024 UTF-8 bytes.
    """
    if type(key) is not str:
        raise TypeError(
            f"an entity key is a str (e.g. str(account_id)), not "
            f"{type(key).__name__}: {key!r}"
        )
    if not key:
        raise ValueError("an entity key must not be empty")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise ValueError(
            f"an entity key is at most {MAX_KEY_BYTES} UTF-8 bytes, "
            f"not {len(key.encode('utf-8', 'surrogatepass'))}: {key[:40]!r}..."
        )
    return key


def shard_of(key: str, shards: int) -> int:
    """The shard of ``key`` among ``shards`` shards: an int in ``[0, shards)``,
    stable across processes, machines and runs (a BLAKE2b digest, never the
    salted ``hash()``).

    Raises:
        TypeError: ``key`` is not a str, or ``shards`` is not an int.
        ValueError: ``key`` is empty or too long, or ``shards`` < 1.
    """
    check_key(key)
    if type(shards) is not int:
        raise TypeError(f"shards is an int, not {shards!r}")
    if shards < 1:
        raise ValueError(f"shards must be >= 1, not {shards}")
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big") % shards
