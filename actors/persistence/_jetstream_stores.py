"""Snapshots and durable states of the JetStream journal, in two key-value
buckets (``<stream>_SNAPSHOTS``, ``<stream>_STATES``; layout in
``_jetstream_format``).

* A snapshot is the key ``<id>.<sequence number>``; the latest at or below a
  bound is found among the persistence id's keys (``<id>.*``, the last
  message of each key, one direct get); deleting snapshots purges their
  keys' messages (no markers are left to list later).
* A durable state is the key ``<id>``; its revision is the key-value
  revision. ``put_state`` with ``expected_revision`` 0 is a key-value
  ``create`` (which succeeds on a deleted key), otherwise an ``update``
  conditional on the revision; ``delete_state`` is a delete marker
  conditional on it. A stale revision is a ``RevisionConflict``.
"""

from __future__ import annotations

from typing import Any, Final

from ..nats import (
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    WrongLastSequenceError,
)
from ._errors import RevisionConflict
from ._jetstream_base import JetStreamBase
from ._jetstream_format import (
    decode_snapshot,
    decode_state,
    encode_snapshot,
    encode_state,
    escape,
)
from ._journal import (
    DurableStateStore,
    SnapshotStore,
    check_sequence_nr,
)
from ._records import StoredSnapshot, StoredState, check_persistence_id

__all__ = ["KeyValueStores"]

#: A conditional key-value write found another revision.
_CONFLICTS: Final = (KeyExistsError, WrongLastSequenceError)


class KeyValueStores(JetStreamBase, SnapshotStore, DurableStateStore):
    """The snapshot and state stores of ``JetStreamJournal``."""

    async def _bucket(self, which: int) -> KeyValue:
        await self._ready()
        bucket = self._snapshots if which == 0 else self._states
        assert bucket is not None
        return bucket

    async def save_snapshot(self, snapshot: StoredSnapshot) -> None:
        if type(snapshot) is not StoredSnapshot:
            raise TypeError(f"save_snapshot takes a StoredSnapshot, not {snapshot!r}")
        check_persistence_id(snapshot.persistence_id)
        check_sequence_nr(snapshot.sequence_nr, "sequence_nr")
        bucket = await self._bucket(0)
        key = f"{escape(snapshot.persistence_id)}.{snapshot.sequence_nr}"
        value = encode_snapshot(snapshot)
        await self._retrying(lambda: bucket.put(key, value), "save a snapshot")

    async def _snapshot_keys(self, persistence_id: str) -> list[tuple[int, str]]:
        bucket = await self._bucket(0)
        pattern = f"{escape(persistence_id)}.*"
        keys = await self._retrying(
            lambda: bucket.keys(pattern, limit=10_000), "list snapshots"
        )
        numbered = []
        for key in keys:
            tail = key.rpartition(".")[2]
            if tail.isdigit():
                numbered.append((int(tail), key))
        return sorted(numbered)

    async def latest_snapshot(
        self, persistence_id: str, max_sequence_nr: int | None = None
    ) -> StoredSnapshot | None:
        check_persistence_id(persistence_id)
        bucket = await self._bucket(0)
        for number, key in reversed(await self._snapshot_keys(persistence_id)):
            if max_sequence_nr is not None and number > max_sequence_nr:
                continue
            try:
                entry = await self._retrying(
                    lambda key=key: bucket.get(key),  # type: ignore[misc]
                    "read a snapshot",
                    (KeyNotFoundError,),
                )
            except KeyNotFoundError:
                continue  # deleted meanwhile
            return decode_snapshot(persistence_id, number, entry.value)
        return None

    async def delete_snapshots(self, persistence_id: str, to_sequence_nr: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(to_sequence_nr, "to_sequence_nr")
        bucket = await self._bucket(0)
        js = await self._ready()
        for number, key in await self._snapshot_keys(persistence_id):
            if number > to_sequence_nr:
                break
            # A purge of the key's messages, not a marker: nothing is left.
            await self._retrying(
                lambda key=key: js.purge_stream(  # type: ignore[misc]
                    bucket.stream, subject=f"$KV.{bucket.bucket}.{key}"
                ),
                "delete snapshots",
            )

    # -- DurableStateStore ----------------------------------------------------------

    async def get_state(self, persistence_id: str) -> StoredState | None:
        check_persistence_id(persistence_id)
        bucket = await self._bucket(1)
        key = escape(persistence_id)

        async def get() -> Any:
            try:
                return await bucket.get(key)
            except KeyNotFoundError:
                return None

        entry = await self._retrying(get, "read a state")
        if entry is None:
            return None
        manifest, payload = decode_state(persistence_id, entry.value)
        return StoredState(persistence_id, entry.revision, manifest, payload)

    async def put_state(
        self,
        persistence_id: str,
        manifest: str,
        payload: bytes,
        expected_revision: int,
    ) -> int:
        check_persistence_id(persistence_id)
        check_sequence_nr(expected_revision, "expected_revision")
        bucket = await self._bucket(1)
        key = escape(persistence_id)
        value = encode_state(manifest, payload)
        try:
            if expected_revision == 0:
                revision: int = await self._retrying(
                    lambda: bucket.create(key, value), "store a state", _CONFLICTS
                )
            else:
                revision = await self._retrying(
                    lambda: bucket.update(key, value, expected_revision),
                    "store a state",
                    _CONFLICTS,
                )
        except _CONFLICTS:
            raise RevisionConflict(persistence_id, expected_revision, None) from None
        return revision

    async def delete_state(self, persistence_id: str, expected_revision: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(expected_revision, "expected_revision")
        bucket = await self._bucket(1)
        key = escape(persistence_id)
        try:
            await self._retrying(
                lambda: bucket.delete(key, last=expected_revision),
                "delete a state",
                _CONFLICTS,
            )
        except _CONFLICTS:
            raise RevisionConflict(persistence_id, expected_revision, None) from None
