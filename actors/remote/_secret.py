"""The cluster secret: frames sealed with an HMAC-SHA256, as Erlang's
distribution cookie (a key shared by the nodes of one cluster), checked
before anything else reads them.

A sealed frame is the frame's bytes followed by a 32-byte tag: the
HMAC-SHA256 (RFC 2104, as ``hmac.digest(key, data, "sha256")``) of ::

    subject " " numbered-reply " " frame

where ``subject`` is where it was published (the receiver's inbox or name
subject: the receiver's node, incarnation and system), ``numbered-reply``
the reply subject when it carries a frame number (it names the sender's
inbox, the receiver and the number, see ``_subjects``) and empty otherwise
(a request whose reply subject the client picks), and ``frame`` the
MessagePack frame (its version and sender among its first bytes). Subjects
never hold spaces, so the input is unambiguous. A frame that fails is
dropped before any byte of it is decoded.

The tag is computed as RFC 2104 defines it, with each key's inner and outer
pads hashed once when the node starts and the C SHA-256 state (``hashlib``)
copied per frame: OpenSSL 3 spends most of a one-shot ``hmac.digest`` of a
small frame setting up, about three times what the copies cost; the tags
are the same (tests/remote/test_secret.py). Tags are compared with
``hmac.compare_digest`` (constant time).

Several keys make rotation possible: frames are sealed with the first and
accepted under any of them (deploy the new key second everywhere, then
first everywhere, then drop the old one).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["MAC_SIZE", "MIN_KEY_BYTES", "Secret", "check_secret"]

#: Bytes of the tag at the end of a sealed frame (HMAC-SHA256).
MAC_SIZE: Final = 32
#: The shortest key accepted, in bytes (128 bits).
MIN_KEY_BYTES: Final = 16
#: The most keys accepted at once (each failing frame costs one HMAC per key).
MAX_KEYS: Final = 8

_compare = hmac.compare_digest
#: Frames up to this many bytes are hashed joined to their head (a copy
#: costs less than a call there); longer ones in two updates.
_JOINED = 64 * 1024
#: SHA-256's block size, in bytes (the HMAC pads' length).
_BLOCK = 64
_IPAD = bytes(0x36 for _ in range(_BLOCK))
_OPAD = bytes(0x5C for _ in range(_BLOCK))


def _pads(key: bytes) -> tuple[Any, Any]:
    """The SHA-256 states of ``key``'s inner and outer pads (RFC 2104)."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = hashlib.sha256(bytes(k ^ p for k, p in zip(key, _IPAD, strict=True)))
    outer = hashlib.sha256(bytes(k ^ p for k, p in zip(key, _OPAD, strict=True)))
    return inner, outer


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

    __slots__ = ("_inner", "_outer", "_pads")

    def __init__(self, keys: tuple[bytes, ...]) -> None:
        self._pads = [_pads(key) for key in keys]
        #: The sealing key's pads, apart: the hot path reads no tuple.
        self._inner, self._outer = self._pads[0]

    # seal and open are written out, not shared through a helper: a call
    # saved per frame both ways (about a tenth of what a tag costs).

    def seal(self, subject: str, reply: str | None, frame: bytes) -> bytes:
        """``frame`` with its tag, for publishing on ``subject`` with
        ``reply`` (a numbered reply subject, or None)."""
        head = f"{subject} {reply or ''} ".encode()
        inner = self._inner.copy()
        if len(frame) <= _JOINED:
            inner.update(head + frame)  # one call: cheaper than a second update
        else:
            inner.update(head)
            inner.update(frame)
        outer = self._outer.copy()
        outer.update(inner.digest())
        tag: bytes = outer.digest()
        return frame + tag

    def open(
        self, subject: str, reply: str | None, data: bytes
    ) -> bytes | memoryview | None:
        """The frame inside ``data`` if its tag is right under one of the
        keys for ``subject`` and ``reply`` (as given to ``seal``), else
        None. Constant time in the tag's bytes (``hmac.compare_digest``).
        A small frame comes back as bytes (a copy costs less than a view,
        here and where it is decoded), a large one as a memoryview."""
        size = len(data) - MAC_SIZE
        if size <= 0:
            return None
        head = f"{subject} {reply or ''} ".encode()
        frame: bytes | memoryview
        if size <= _JOINED:
            frame = data[:size]
            signed: bytes | None = head + frame
        else:
            frame = memoryview(data)[:size]
            signed = None
        tag = data[size:]
        for inner, outer in self._pads:
            inner = inner.copy()
            if signed is not None:
                inner.update(signed)
            else:
                inner.update(head)
                inner.update(frame)
            outer = outer.copy()
            outer.update(inner.digest())
            if _compare(outer.digest(), tag):
                return frame
        return None
