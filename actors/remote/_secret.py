"""The cluster secret: frames sealed with an HMAC-SHA256, as Erlang's
distribution cookie (a key shared by the nodes of one cluster), checked
before anything else reads them.

A sealed frame is the frame's bytes followed by a 32-byte tag: the
HMAC-SHA256 (stdlib ``hmac``, computed in C) of ::

    subject " " numbered-reply " " frame

where ``subject`` is where it was published (the receiver's inbox or name
subject: the receiver's node, incarnation and system), ``numbered-reply``
the reply subject when it carries a frame number (it names the sender's
inbox, the receiver and the number, see ``_subjects``) and empty otherwise
(a request whose reply subject the client picks), and ``frame`` the
MessagePack frame (its version and sender among its first bytes). Subjects
never hold spaces, so the input is unambiguous. A frame that fails is
dropped before any byte of it is decoded.

Several keys make rotation possible: frames are sealed with the first and
accepted under any of them (deploy the new key second everywhere, then
first everywhere, then drop the old one).
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Final

__all__ = ["MAC_SIZE", "MIN_KEY_BYTES", "Secret", "check_secret"]

#: Bytes of the tag at the end of a sealed frame (HMAC-SHA256).
MAC_SIZE: Final = 32
#: The shortest key accepted, in bytes (128 bits).
MIN_KEY_BYTES: Final = 16
#: The most keys accepted at once (each failing frame costs one HMAC per key).
MAX_KEYS: Final = 8

_digest = hmac.digest
_compare = hmac.compare_digest


def check_secret(secret: object) -> tuple[bytes, ...] | None:
    """The keys of ``Remote(secret=...)``: ``None``, one ``bytes`` key or a
    sequence of them (the first seals, all are accepted).

    Raises:
        TypeError: ``secret`` is not bytes, a sequence of bytes, or None
            (a ``str`` is refused: encode it, knowing its entropy).
        ValueError: no key, more than ``MAX_KEYS``, or a key shorter than
            ``MIN_KEY_BYTES`` bytes.
    """
    if secret is None:
        return None
    if isinstance(secret, bytes | bytearray | memoryview):
        keys: list[object] = [secret]
    elif isinstance(secret, Sequence) and not isinstance(secret, str):
        keys = list(secret)
    else:
        raise TypeError(
            "secret must be bytes, a sequence of bytes (the first seals, all "
            f"are accepted) or None, not {type(secret).__name__}"
        )
    if not 1 <= len(keys) <= MAX_KEYS:
        raise ValueError(f"secret must hold 1 to {MAX_KEYS} keys, not {len(keys)}")
    checked = []
    for key in keys:
        if not isinstance(key, bytes | bytearray | memoryview):
            raise TypeError(
                f"each key of secret must be bytes, not {type(key).__name__}"
            )
        if len(key) < MIN_KEY_BYTES:
            raise ValueError(
                f"each key of secret must be at least {MIN_KEY_BYTES} bytes, "
                f"not {len(key)} (use secrets.token_bytes(32))"
            )
        checked.append(bytes(key))
    return tuple(checked)


class Secret:
    """Seals and opens frames with the cluster's keys (see the module doc).

    Args:
        keys: from ``check_secret`` (at least one).
    """

    __slots__ = ("_key", "_keys")

    def __init__(self, keys: tuple[bytes, ...]) -> None:
        self._keys = keys
        self._key = keys[0]

    def seal(self, subject: str, reply: str | None, frame: bytes) -> bytes:
        """``frame`` with its tag, for publishing on ``subject`` with
        ``reply`` (a numbered reply subject, or None)."""
        head = f"{subject} {reply or ''} ".encode()
        return frame + _digest(self._key, head + frame, "sha256")

    def open(self, subject: str, reply: str | None, data: bytes) -> memoryview | None:
        """The frame inside ``data`` if its tag is right under one of the
        keys for ``subject`` and ``reply`` (as given to ``seal``), else
        None. Constant time in the tag's bytes (``hmac.compare_digest``)."""
        size = len(data) - MAC_SIZE
        if size <= 0:
            return None
        view = memoryview(data)
        tag = view[size:]
        signed = f"{subject} {reply or ''} ".encode() + view[:size]
        for key in self._keys:
            if _compare(_digest(key, signed, "sha256"), tag):
                return view[:size]
        return None
