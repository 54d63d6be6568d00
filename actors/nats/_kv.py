"""Key-value buckets on JetStream, laid out as every NATS client does (so
nats.py, the ``nats`` CLI and this client share buckets): bucket ``B`` is the
stream ``KV_B`` on the subjects ``$KV.B.>``, a key ``k`` its subject
``$KV.B.k``, a value the payload of the key's last message, its revision
that message's stream sequence; deletes and purges are messages with the
header ``KV-Operation: DEL`` / ``PURGE`` (a purge also rolls the key's
history up, ``Nats-Rollup: sub``).

Compare-and-set: ``update(key, value, last)`` publishes with
``Nats-Expected-Last-Subject-Sequence: last``; ``create`` with 0, retried
once on the revision of a delete marker (a deleted key can be created
again).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from ._arguments import integer
from ._errors import (
    KeyExistsError,
    KeyNotFoundError,
    MessageNotFoundError,
    WrongLastSequenceError,
)
from ._jetstream_types import Storage, StoredMsg, StreamConfig, check_name

if TYPE_CHECKING:
    from ._jetstream import JetStream

__all__ = ["KeyValue", "KeyValueConfig", "KeyValueEntry"]

_KEY = re.compile(r"[-/_=.a-zA-Z0-9]+")
_FILTER = re.compile(r"[-/_=.a-zA-Z0-9*>]+")
_OPERATION: Final = "KV-Operation"

Operation = Literal["PUT", "DEL", "PURGE"]


def check_key(key: object, *, filter: bool = False) -> str:
    """``key`` if it is a valid key (or key filter, with ``*`` and ``>``):
    letters, digits and ``-/_=.``, not starting or ending with ``.``.

    Raises:
        TypeError: it is not a str.
        ValueError: it is empty or holds another character.
    """
    if type(key) is not str:
        raise TypeError(f"a key is a str, not {key!r}")
    pattern = _FILTER if filter else _KEY
    if not pattern.fullmatch(key) or key[0] == "." or key[-1] == ".":
        raise ValueError(
            f"a key is letters, digits and '-/_=.', not starting or ending "
            f"with '.': {key!r}"
        )
    return key


@dataclass(frozen=True)
class KeyValueConfig:
    """A key-value bucket's configuration.

    Attributes:
        bucket: its name (no whitespace, ``.``, ``*``, ``>``).
        history: values kept per key (1 to 64).
        ttl: seconds an entry lives (0: for ever): the stream's ``max_age``.
        max_value_size: the largest value, in bytes (-1: the server's limit).
        max_bytes: the bucket's size limit (-1: none).
        storage: ``"file"`` or ``"memory"``.
        replicas: copies in a cluster.
        description: a description, or None.
    """

    bucket: str
    history: int = 1
    ttl: float = 0.0
    max_value_size: int = -1
    max_bytes: int = -1
    storage: Storage = "file"
    replicas: int = 1
    description: str | None = None

    def __post_init__(self) -> None:
        check_name(self.bucket, "bucket name")
        if not 1 <= integer("history", self.history, 1) <= 64:
            raise ValueError(f"history is 1 to 64, not {self.history}")

    def stream_config(self) -> StreamConfig:
        """The bucket's stream, as nats.py makes it."""
        window = 120.0 if not self.ttl else min(120.0, self.ttl)
        return StreamConfig(
            name=f"KV_{self.bucket}",
            subjects=(f"$KV.{self.bucket}.>",),
            storage=self.storage,
            max_msgs_per_subject=self.history,
            max_bytes=self.max_bytes,
            max_age=self.ttl,
            max_msg_size=self.max_value_size,
            discard="new",
            num_replicas=self.replicas,
            duplicate_window=window,
            allow_direct=True,
            allow_rollup_hdrs=True,
            deny_delete=True,
            description=self.description,
        )


@dataclass(frozen=True)
class KeyValueEntry:
    """One entry of a key: a value, or a delete or purge marker.

    Attributes:
        bucket: the bucket.
        key: the key.
        value: the value (``b""`` for a marker).
        revision: its revision (the stream sequence of its message).
        operation: ``"PUT"``, ``"DEL"`` or ``"PURGE"``.
        created: when it was stored (RFC 3339 text).
    """

    bucket: str
    key: str
    value: bytes
    revision: int
    operation: Operation = "PUT"
    created: str = ""


class KeyValue:
    """A key-value bucket (``await js.key_value(bucket)`` or
    ``await js.create_key_value(KeyValueConfig(bucket))``); see the module
    docstring for its layout. Every method may run concurrently with others.
    """

    def __init__(self, js: JetStream, bucket: str) -> None:
        self.js = js
        self.bucket = check_name(bucket, "bucket name")
        self.stream = f"KV_{bucket}"
        self._prefix = f"$KV.{bucket}."

    def __repr__(self) -> str:
        return f"<KeyValue {self.bucket!r}>"

    def _entry(self, msg: StoredMsg) -> KeyValueEntry:
        operation = msg.headers.get(_OPERATION, "PUT")
        if operation not in ("PUT", "DEL", "PURGE"):
            operation = "PUT"
        return KeyValueEntry(
            self.bucket,
            msg.subject[len(self._prefix) :],
            msg.data,
            msg.seq,
            operation,  # type: ignore[arg-type]
            msg.time,
        )

    async def entry(self, key: str, revision: int | None = None) -> KeyValueEntry:
        """The key's last entry, or the one of ``revision``: markers too.

        Raises:
            KeyNotFoundError: the key has no entry (of that revision).
        """
        subject = self._prefix + check_key(key)
        try:
            if revision is None:
                msg = await self.js.get_msg(self.stream, last_by_subject=subject)
            else:
                msg = await self.js.get_msg(
                    self.stream, integer("revision", revision, 1)
                )
        except MessageNotFoundError:
            raise KeyNotFoundError(key) from None
        if msg.subject != subject:
            raise KeyNotFoundError(key)
        return self._entry(msg)

    async def get(self, key: str, revision: int | None = None) -> KeyValueEntry:
        """The key's value now, or at ``revision``.

        Raises:
            KeyNotFoundError: no value (never written, deleted or purged).
        """
        found = await self.entry(key, revision)
        if found.operation != "PUT":
            raise KeyNotFoundError(key)
        return found

    async def put(self, key: str, value: bytes) -> int:
        """Store ``value`` under ``key`` whatever is there.

        Returns:
            The new revision.
        """
        ack = await self.js.publish(self._prefix + check_key(key), value)
        return ack.seq

    async def update(self, key: str, value: bytes, last: int) -> int:
        """Store ``value`` only if the key's last revision is ``last`` (0:
        the key has never been written or was purged).

        Returns:
            The new revision.

        Raises:
            WrongLastSequenceError: the key's last revision is another;
                nothing was stored.
        """
        ack = await self.js.publish(
            self._prefix + check_key(key),
            value,
            expected_last_subject_sequence=integer("last", last, 0),
        )
        return ack.seq

    async def create(self, key: str, value: bytes) -> int:
        """Store ``value`` only if the key has no value (never written, or
        deleted).

        Returns:
            The new revision.

        Raises:
            KeyExistsError: the key has a value; nothing was stored.
        """
        try:
            return await self.update(key, value, 0)
        except WrongLastSequenceError as exc:
            error = exc
        try:
            last = await self.entry(key)
        except KeyNotFoundError:
            last = None
        if last is not None and last.operation != "PUT":
            try:
                return await self.update(key, value, last.revision)
            except WrongLastSequenceError as exc:
                error = exc
        raise KeyExistsError(error.code, error.err_code, error.description) from None

    async def delete(self, key: str, last: int | None = None) -> int:
        """Delete the key's value (a ``DEL`` marker; the history stays),
        only if its last revision is ``last`` when given.

        Returns:
            The marker's revision.

        Raises:
            WrongLastSequenceError: ``last`` is not the key's last revision.
        """
        ack = await self.js.publish(
            self._prefix + check_key(key),
            b"",
            headers={_OPERATION: "DEL"},
            expected_last_subject_sequence=None
            if last is None
            else integer("last", last, 0),
        )
        return ack.seq

    async def purge(self, key: str) -> int:
        """Delete the key's value and its history (a ``PURGE`` marker that
        rolls the key's messages up).

        Returns:
            The marker's revision.
        """
        ack = await self.js.publish(
            self._prefix + check_key(key),
            b"",
            headers={_OPERATION: "PURGE", "Nats-Rollup": "sub"},
        )
        return ack.seq

    async def entries(
        self, key_filter: str = ">", *, limit: int = 1024
    ) -> list[KeyValueEntry]:
        """The live entries (markers left out) of the keys matching
        ``key_filter`` (``*`` one token, ``>`` the rest), at most ``limit``
        keys looked at, in stream order.

        Raises:
            JetStreamError: the server refused (more keys than it allows).
        """
        found = await self.js.last_msgs(
            self.stream,
            [self._prefix + check_key(key_filter, filter=True)],
            batch=limit,
        )
        entries = (self._entry(msg) for msg in found)
        return [entry for entry in entries if entry.operation == "PUT"]

    async def keys(self, key_filter: str = ">", *, limit: int = 1024) -> list[str]:
        """The keys with a value matching ``key_filter`` (see ``entries``)."""
        return [entry.key for entry in await self.entries(key_filter, limit=limit)]
