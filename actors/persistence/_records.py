"""What journals store: events, snapshots and durable states, already encoded.

A journal never sees an actor's objects, only these records: a manifest (the
codec's tag and version, ``"deposited@2"``) and the payload bytes. So a journal
is a store of bytes with a few ordering rules, and the codec alone decides what
the bytes mean (see ``_codec``). They are NamedTuples: made on every persist,
they cost a tuple, and a journal may store one as it is (a ``StoredEvent``'s
fields are the SQLite journal's columns, in order).
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = [
    "MAX_PERSISTENCE_ID",
    "StoredEvent",
    "StoredSnapshot",
    "StoredState",
    "check_persistence_id",
]

#: The longest persistence id, in characters.
MAX_PERSISTENCE_ID: Final = 255


def check_persistence_id(value: object) -> str:
    """``value`` if it is a valid persistence id.

    Raises:
        TypeError: it is not a str.
        ValueError: it is empty, longer than 255 characters, or holds a
            control character (the journals put it in file keys and subjects).
    """
    if type(value) is not str:
        raise TypeError(f"a persistence id is a str, not {value!r}")
    if not value:
        raise ValueError("a persistence id cannot be empty")
    if len(value) > MAX_PERSISTENCE_ID:
        raise ValueError(
            f"a persistence id has at most {MAX_PERSISTENCE_ID} characters, "
            f"{value[:40]!r}... has {len(value)}"
        )
    if not value.isprintable():
        raise ValueError(f"a persistence id cannot hold control characters: {value!r}")
    return value


class StoredEvent(NamedTuple):
    """One event as a journal stores it.

    Attributes:
        persistence_id: whose event.
        sequence_nr: its number in that persistence id's log: 1, 2, 3, ...
            with no gap.
        manifest: the codec's name for its type and version (``"tag@2"``).
        payload: its encoding (MessagePack).
        writer: the id of the actor incarnation that wrote it (a random hex
            string per incarnation; journals may use it to tell a retry of
            one's own write from another writer's).
        timestamp: when it was written, in seconds since the epoch.
    """

    persistence_id: str
    sequence_nr: int
    manifest: str
    payload: bytes
    writer: str
    timestamp: float


class StoredSnapshot(NamedTuple):
    """A snapshot of a state as a snapshot store keeps it.

    Attributes:
        persistence_id: whose state.
        sequence_nr: the sequence number of the last event the state includes.
        manifest: the codec's name for the state's type and version.
        payload: its encoding.
        timestamp: when it was taken, in seconds since the epoch.
    """

    persistence_id: str
    sequence_nr: int
    manifest: str
    payload: bytes
    timestamp: float


class StoredState(NamedTuple):
    """The state of a durable state actor as a state store keeps it.

    Attributes:
        persistence_id: whose state.
        revision: the store's number of this version: it increases with every
            change of the key and is never reused; its values are the store's
            own (1, 2, 3 in SQLite; a stream sequence in JetStream KV), so
            compare it for equality only. 0 is never a revision: it means "no
            state".
        manifest: the codec's name for the state's type and version.
        payload: its encoding.
    """

    persistence_id: str
    revision: int
    manifest: str
    payload: bytes
