"""What the JetStream journal stores, byte for byte: the layout other
programs (nats.py, the ``nats`` CLI) read and write too.

* Subjects: ``<prefix>.e.<id>`` holds a persistence id's events,
  ``<prefix>.d.<id>`` its deleted-up-to number; ``<id>`` is the persistence
  id escaped into one subject token (and a valid key-value key): ASCII
  letters, digits, ``_`` and ``-`` stay, every other character becomes
  ``=XX`` per byte of its UTF-8 (``"a.b"`` -> ``"a=2Eb"``).
* One message per append (that is what makes an append of several events
  atomic), with the headers ``Actors-First`` and ``Actors-Last`` (the
  sequence numbers of its first and last event), ``Actors-Writer`` (the
  writer of its first event) and ``Nats-Msg-Id``
  (``<id>:<writer>:<first>``); its payload is the events one after the
  other, each as ``>HBdI`` (manifest length, writer length, timestamp in
  seconds since the epoch as a double, payload length), then the manifest
  (UTF-8), the writer (UTF-8) and the payload.
* A snapshot: the value of the key ``<id>.<sequence number>`` in the
  snapshot bucket: ``>Hd`` (manifest length, timestamp), the manifest, the
  payload. A durable state: the value of the key ``<id>`` in the state
  bucket: ``>H`` (manifest length), the manifest, the payload; its revision
  is the key-value revision.

Decoding treats the bytes as untrusted: every length is checked against
what is left, every header parsed strictly; a message that does not hold
what its headers say is a ``JournalError`` naming the stream sequence.
"""

from __future__ import annotations

import re
import string
import struct
from collections.abc import Mapping, Sequence
from typing import Final

from ._errors import EventsRejected, JournalError
from ._records import StoredEvent, StoredSnapshot

__all__ = [
    "FIRST",
    "LAST",
    "WRITER",
    "decode_events",
    "decode_snapshot",
    "decode_state",
    "encode_events",
    "encode_snapshot",
    "encode_state",
    "escape",
    "numbers_of",
]

FIRST: Final = "Actors-First"
LAST: Final = "Actors-Last"
WRITER: Final = "Actors-Writer"

_EVENT: Final = struct.Struct(">HBdI")
_SNAPSHOT: Final = struct.Struct(">Hd")
_STATE: Final = struct.Struct(">H")
_PLAIN = re.compile(r"[A-Za-z0-9_-]+")
_SAFE: Final = frozenset(string.ascii_letters + string.digits + "_-")


def escape(persistence_id: str) -> str:
    """The persistence id as one subject token and key (see the module
    docstring); a one-to-one mapping."""
    if _PLAIN.fullmatch(persistence_id):
        return persistence_id
    return "".join(
        char if char in _SAFE else "".join(f"={byte:02X}" for byte in char.encode())
        for char in persistence_id
    )


def encode_events(events: Sequence[StoredEvent]) -> bytes:
    """The payload of one append's message.

    Raises:
        EventsRejected: a manifest is over 65,535 bytes or a writer over 255.
    """
    parts: list[bytes] = []
    pack = _EVENT.pack
    for event in events:
        manifest = event.manifest.encode()
        writer = event.writer.encode()
        if len(manifest) > 0xFFFF or len(writer) > 0xFF:
            raise EventsRejected(
                f"event {event.sequence_nr} of {event.persistence_id!r}: its "
                "manifest (at most 65535 bytes) or writer (at most 255) is too long"
            )
        parts.append(
            pack(len(manifest), len(writer), event.timestamp, len(event.payload))
        )
        parts.append(manifest)
        parts.append(writer)
        parts.append(event.payload)
    return b"".join(parts)


def numbers_of(headers: Mapping[str, str], seq: int) -> tuple[int, int]:
    """(first, last) sequence numbers of a journal message's headers.

    Raises:
        JournalError: they are missing or not 1 <= first <= last.
    """
    first = headers.get(FIRST, "")
    last = headers.get(LAST, "")
    if not (first.isdigit() and last.isdigit()) or not 1 <= int(first) <= int(last):
        raise JournalError(
            f"the message at stream sequence {seq} is not a journal message "
            f"(headers {FIRST}={first!r}, {LAST}={last!r})"
        )
    return int(first), int(last)


def decode_events(
    persistence_id: str, data: bytes, first: int, last: int, seq: int
) -> list[StoredEvent]:
    """The events of one append's message (numbered ``first`` to ``last``).

    Raises:
        JournalError: the payload does not hold exactly those events.
    """
    events: list[StoredEvent] = []
    view = memoryview(data)
    size = len(data)
    position = 0
    number = first
    unpack = _EVENT.unpack_from
    head = _EVENT.size
    try:
        while position < size:
            if number > last or position + head > size:
                raise ValueError("more bytes than its events")
            m, w, timestamp, p = unpack(view, position)
            position += head
            end = position + m + w + p
            if end > size:
                raise ValueError("an event runs past the end")
            manifest = str(view[position : position + m], "utf-8")
            writer = str(view[position + m : position + m + w], "utf-8")
            payload = view[position + m + w : end].tobytes()
            events.append(
                StoredEvent(
                    persistence_id, number, manifest, payload, writer, timestamp
                )
            )
            position = end
            number += 1
        if number != last + 1:
            raise ValueError(f"{number - first} events where {last - first + 1} belong")
    except (ValueError, struct.error) as exc:  # UnicodeDecodeError is one
        raise JournalError(
            f"the journal message of {persistence_id!r} at stream sequence {seq} "
            f"is malformed: {exc}"
        ) from None
    finally:
        view.release()
    return events


def encode_snapshot(snapshot: StoredSnapshot) -> bytes:
    """A snapshot's value in the snapshot bucket.

    Raises:
        EventsRejected: its manifest is over 65,535 bytes.
    """
    manifest = snapshot.manifest.encode()
    if len(manifest) > 0xFFFF:
        raise EventsRejected("a snapshot's manifest is over 65535 bytes")
    return b"".join(
        (_SNAPSHOT.pack(len(manifest), snapshot.timestamp), manifest, snapshot.payload)
    )


def decode_snapshot(
    persistence_id: str, sequence_nr: int, value: bytes
) -> StoredSnapshot:
    """The snapshot of a value of the snapshot bucket.

    Raises:
        JournalError: the value is malformed.
    """
    try:
        m, timestamp = _SNAPSHOT.unpack_from(value)
        start = _SNAPSHOT.size
        if start + m > len(value):
            raise ValueError("the manifest runs past the end")
        manifest = value[start : start + m].decode()
    except (ValueError, struct.error) as exc:
        raise JournalError(
            f"the snapshot of {persistence_id!r} at {sequence_nr} is malformed: {exc}"
        ) from None
    return StoredSnapshot(
        persistence_id, sequence_nr, manifest, value[start + m :], timestamp
    )


def encode_state(manifest: str, payload: bytes) -> bytes:
    """A durable state's value in the state bucket.

    Raises:
        EventsRejected: the manifest is over 65,535 bytes.
    """
    raw = manifest.encode()
    if len(raw) > 0xFFFF:
        raise EventsRejected("a state's manifest is over 65535 bytes")
    return b"".join((_STATE.pack(len(raw)), raw, payload))


def decode_state(persistence_id: str, value: bytes) -> tuple[str, bytes]:
    """(manifest, payload) of a value of the state bucket.

    Raises:
        JournalError: the value is malformed.
    """
    try:
        (m,) = _STATE.unpack_from(value)
        start = _STATE.size
        if start + m > len(value):
            raise ValueError("the manifest runs past the end")
        return value[start : start + m].decode(), value[start + m :]
    except (ValueError, struct.error) as exc:
        raise JournalError(
            f"the state of {persistence_id!r} is malformed: {exc}"
        ) from None
