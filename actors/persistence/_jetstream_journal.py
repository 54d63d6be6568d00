"""``JetStreamJournal``: events in a NATS JetStream stream, snapshots and
durable states in key-value buckets (the ``nats-server`` binary with
``-js``; our own anyio client, ``actors.nats``).

The layout is ``_jetstream_format``'s. How it keeps the journal's rules
(``_journal``'s module docstring has the design):

* Atomic appends: one message per append.
* One writer per persistence id: an append is published with
  ``Nats-Expected-Last-Subject-Sequence`` set to the stream sequence of the
  subject's last message, which the journal knows from its own last append
  or read of that persistence id (a bounded cache), else looks up (a direct
  get of the subject's last message, whose ``Actors-Last`` header is the
  highest number). If the number it expects is not the highest, it raises
  ``SequenceConflict`` without publishing; if another writer appended since
  it looked, the server refuses (error 10071), which is a
  ``SequenceConflict`` too.
* Retries: an append whose acknowledgement does not come (a lost reply, a
  server restarting, JetStream not ready yet) is published again with the
  same ``Nats-Msg-Id`` until ``write_timeout`` seconds have passed. The
  stream stores it at most once: a retry of a stored append is refused for
  its expected last subject sequence (the server checks that before the
  duplicate window: nats-server 2.15), and a refused append whose first
  event is held by a message with its own ``Nats-Msg-Id`` is known stored
  (the id is ``<id>:<writer>:<first>``, the writer a random id per actor
  incarnation); without the expected sequence the window makes it a
  duplicate. Reads retry the same way. What is still unanswered then is a
  ``JournalError`` (it may be stored).
* Group commit: appends of many actors run at once, each waiting for its own
  acknowledgement; the client writes every request queued since its last
  write in one socket write, and the server stores them in one pass, so a
  busy journal sends a batch per round trip, not an append per round trip.
* Reads: direct gets of a batch of the subject's messages (no consumer to
  make and delete), starting at the message that holds the first wanted
  number (found by a binary search over stream sequences, or from the
  position the previous page of the same recovery ended at).
* Deletion: the subject is purged below its first message to keep, never
  its last message, so the highest number and the conditional append
  survive a deletion of every event; the deleted-up-to number is kept (one
  message per persistence id, rolled up) and reads skip the events at or
  below it that a kept message still holds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Final

from ..nats import (
    ConnectionClosedError,
    JetStream,
    JetStreamError,
    MaxPayloadError,
    MessageNotFoundError,
    PubAck,
    StoredMsg,
    StreamNotFoundError,
    WrongLastSequenceError,
)
from ._errors import (
    EventsRejected,
    JournalError,
    SequenceConflict,
)
from ._jetstream_base import TRANSIENT
from ._jetstream_format import (
    FIRST,
    LAST,
    WRITER,
    decode_events,
    encode_events,
    escape,
    numbers_of,
)
from ._jetstream_stores import KeyValueStores
from ._journal import (
    Journal,
    check_append,
    check_sequence_nr,
)
from ._records import StoredEvent, check_persistence_id

__all__ = ["JetStreamJournal"]

#: What makes an append go through the retries (``_retrying``'s transient
#: errors, a restarting server's direct gets).
_RETRIED: Final = (*TRANSIENT, StreamNotFoundError, ConnectionClosedError)
#: JetStream error codes of a message the stream refuses for its size.
_TOO_LARGE: Final = frozenset((10054,))


class JetStreamJournal(KeyValueStores, Journal):
    """A journal, snapshot store and durable state store on NATS JetStream.

    ``async with JetStreamJournal(url) as journal:`` connects (its own
    client, closed on the way out) and makes the stream and buckets if
    missing; ``JetStreamJournal(client=nc)`` uses a client of the caller's
    (not closed). A system's actors share one journal: one stream per
    system, a subject per persistence id.

    Args:
        url: the NATS server URL (or a list); ignored with ``client``.
        client: a connected ``actors.nats.Client`` to use instead.
        stream: the stream's name (also the prefix of the buckets' names:
            ``<stream>_SNAPSHOTS``, ``<stream>_STATES``).
        subject_prefix: the subjects' prefix, tokens separated by ``.``
            without wildcards (None, the default: ``journal.<stream>``).
        storage: ``"file"`` (default: survives a server restart) or
            ``"memory"``.
        replicas: copies of the stream and buckets in a JetStream cluster
            (1 to 5; more than the cluster's servers fails on entry with
            ``JournalError``).
        duplicate_window: seconds during which a retried append is known
            for a duplicate (the stream's window; retries stop before it).
        write_timeout: seconds an operation keeps retrying (a lost
            acknowledgement, a restarting server) before it fails with
            ``JournalError``.
        request_timeout: seconds one request waits for its answer.
        read_batch: messages fetched per direct get while reading.
        max_cached: persistence ids whose last position is remembered.
        connect_options: keyword arguments for ``actors.nats.connect``.

    Raises:
        TypeError / ValueError: a bad argument, naming it (before any
            network I/O).

    Entering raises ``JournalError`` when it cannot connect or the server
    refuses the stream or a bucket; the journal's own client is closed
    again before the error leaves the ``async with``.
    """

    # -- Journal ----------------------------------------------------------------

    async def _last_message(self, js: JetStream, subject: str) -> StoredMsg | None:
        async def get() -> StoredMsg | None:
            try:
                return await js.get_msg(self.stream, last_by_subject=subject)
            except MessageNotFoundError:
                return None

        return await self._retrying(get, "read a subject's last message")

    async def _highest(self, js: JetStream, persistence_id: str) -> tuple[int, int]:
        """(highest number, stream sequence of the subject's last message)."""
        last = await self._last_message(js, self._events + escape(persistence_id))
        if last is None:
            return 0, 0
        return numbers_of(last.headers, last.seq)[1], last.seq

    async def append(
        self,
        persistence_id: str,
        events: Sequence[StoredEvent],
        expected_sequence_nr: int,
    ) -> None:
        check_append(persistence_id, events, expected_sequence_nr)
        js = self._js or await self._ready()
        known = self._last.get(persistence_id)
        if known is None or known[0] != expected_sequence_nr:
            known = await self._highest(js, persistence_id)
            if known[0] != expected_sequence_nr:
                self._remember(self._last, persistence_id, known)
                raise SequenceConflict(persistence_id, expected_sequence_nr, known[0])
        escaped = escape(persistence_id)
        first, last = events[0].sequence_nr, events[-1].sequence_nr
        writer = events[0].writer
        headers = {FIRST: str(first), LAST: str(last)}
        if writer and writer.isprintable() and ":" not in writer:
            headers[WRITER] = writer
        payload = encode_events(events)
        subject = self._events + escaped
        msg_id = f"{escaped}:{writer.encode().hex()}:{first}"
        def publish() -> Awaitable[PubAck]:
            return js.publish(
                subject,
                payload,
                headers=headers,
                msg_id=msg_id,
                expected_last_subject_sequence=known[1],
            )

        try:
            try:  # the usual case first: no retry machinery on the way
                ack = await publish()
            except _RETRIED:
                ack = await self._retrying(
                    publish,
                    f"append to {persistence_id!r}",
                    (WrongLastSequenceError, MaxPayloadError, JetStreamError),
                )
        except WrongLastSequenceError:
            self._last.pop(persistence_id, None)
            stored = await self._stored_by(js, subject, first, msg_id)
            if stored is None:
                raise SequenceConflict(
                    persistence_id, expected_sequence_nr, None
                ) from None
            # An earlier attempt of this append was stored, its answer lost.
            self._remember(self._last, persistence_id, (last, stored))
            return
        except MaxPayloadError as exc:
            raise EventsRejected(
                f"an append of {len(payload)} bytes to {persistence_id!r} is over "
                f"the server's max_payload: {exc}"
            ) from exc
        except JetStreamError as exc:
            self._last.pop(persistence_id, None)
            if exc.err_code in _TOO_LARGE:
                raise EventsRejected(
                    f"the stream refuses an append of {len(payload)} bytes to "
                    f"{persistence_id!r}: {exc}"
                ) from exc
            raise JournalError(f"{self!r} could not append: {exc}") from exc
        except BaseException:
            self._last.pop(persistence_id, None)
            raise
        self._remember(self._last, persistence_id, (last, ack.seq))

    async def _stored_by(
        self, js: JetStream, subject: str, first: int, msg_id: str
    ) -> int | None:
        """The stream sequence of the message holding event ``first`` if it
        has ``msg_id`` (an earlier attempt of the same append), else None."""
        seq = await self._locate(js, subject, first)

        async def get() -> StoredMsg | None:
            try:
                return await js.get_msg(self.stream, seq, next_by_subject=subject)
            except MessageNotFoundError:
                return None

        found = await self._retrying(get, "read the journal")
        if found is None or found.headers.get("Nats-Msg-Id") != msg_id:
            return None
        return found.seq if numbers_of(found.headers, found.seq)[0] == first else None

    async def _deleted_up_to(self, js: JetStream, escaped: str) -> int:
        marker = await self._last_message(js, self._deleted + escaped)
        if marker is None:
            return 0
        text = marker.data.decode(errors="replace")
        if not text.isdigit():
            raise JournalError(
                f"the deletion marker at stream sequence {marker.seq} is {text[:40]!r}"
            )
        return int(text)

    async def _locate(self, js: JetStream, subject: str, number: int) -> int:
        """A stream sequence at or below the message holding event
        ``number`` (or the first message after it), by binary search."""

        async def at(seq: int) -> StoredMsg | None:
            async def get() -> StoredMsg | None:
                try:
                    return await js.get_msg(self.stream, seq, next_by_subject=subject)
                except MessageNotFoundError:
                    return None

            return await self._retrying(get, "read the journal")

        head = await at(1)
        if head is None:
            return 1
        if numbers_of(head.headers, head.seq)[0] >= number:
            return head.seq
        tail = await self._last_message(js, subject)
        if tail is None:  # pragma: no cover - purged meanwhile
            return 1
        if numbers_of(tail.headers, tail.seq)[0] <= number:
            return tail.seq
        low, high = head.seq, tail.seq
        # The message at ``low`` starts at or below ``number``; the first
        # message at or after ``high`` starts above it.
        while high - low > 1:
            middle = (low + high) // 2
            found = await at(middle)
            if found is None or found.seq >= high:
                high = middle
            elif numbers_of(found.headers, found.seq)[0] <= number:
                low = found.seq
            else:
                high = middle
        return low

    async def _read(
        self, persistence_id: str, start: int, stop: int, limit: int
    ) -> list[StoredEvent]:
        js = await self._ready()
        escaped = escape(persistence_id)
        subject = self._events + escaped
        start = max(start, 1, await self._deleted_up_to(js, escaped) + 1)
        if start > stop:
            return []
        cursor = self._cursor.get(persistence_id)
        if cursor is not None and cursor[0] == start:
            seq = cursor[1]
        elif start == 1:
            seq = 1
        else:
            seq = await self._locate(js, subject, start)
        found: list[StoredEvent] = []
        batch = self.read_batch
        while True:
            msgs = await self._retrying(
                lambda seq=seq: js.get_msgs(  # type: ignore[misc]
                    self.stream, subject, start_seq=seq, batch=batch
                ),
                "read the journal",
            )
            for msg in msgs:
                first, last = numbers_of(msg.headers, msg.seq)
                if last < start:
                    continue
                for event in decode_events(
                    persistence_id, msg.data, first, last, msg.seq
                ):
                    number = event.sequence_nr
                    if number < start:
                        continue
                    if number > stop or len(found) >= limit:
                        self._remember(self._cursor, persistence_id, (number, msg.seq))
                        return found
                    found.append(event)
            if len(msgs) < batch:
                if found:
                    self._remember(
                        self._cursor,
                        persistence_id,
                        (found[-1].sequence_nr + 1, msgs[-1].seq if msgs else seq),
                    )
                return found
            seq = msgs[-1].seq + 1

    async def read_events(
        self,
        persistence_id: str,
        from_sequence_nr: int,
        to_sequence_nr: int | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        check_persistence_id(persistence_id)
        check_sequence_nr(from_sequence_nr, "from_sequence_nr")
        stop = 2**63 if to_sequence_nr is None else to_sequence_nr
        count = 2**63 if limit is None else check_sequence_nr(limit, "limit")
        if count == 0:
            return []
        return await self._read(persistence_id, from_sequence_nr, stop, count)

    async def highest_sequence_nr(self, persistence_id: str) -> int:
        check_persistence_id(persistence_id)
        js = await self._ready()
        known = await self._highest(js, persistence_id)
        self._remember(self._last, persistence_id, known)
        return known[0]

    async def delete_events(self, persistence_id: str, to_sequence_nr: int) -> None:
        check_persistence_id(persistence_id)
        check_sequence_nr(to_sequence_nr, "to_sequence_nr")
        js = await self._ready()
        highest, _ = await self._highest(js, persistence_id)
        escaped = escape(persistence_id)
        upto = min(to_sequence_nr, highest)
        if upto <= await self._deleted_up_to(js, escaped):
            return
        # The marker first: a crash before the purge leaves reads right.
        await self._retrying(
            lambda: js.publish(
                self._deleted + escaped,
                str(upto).encode(),
                headers={"Nats-Rollup": "sub"},
            ),
            f"delete events of {persistence_id!r}",
        )
        subject = self._events + escaped
        keep = await self._locate(js, subject, upto + 1)
        if keep > 1:
            await self._retrying(
                lambda: js.purge_stream(self.stream, subject=subject, seq=keep),
                f"delete events of {persistence_id!r}",
            )
        self._cursor.pop(persistence_id, None)
