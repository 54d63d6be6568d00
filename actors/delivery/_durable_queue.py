"""``DurableProducerQueue``: a producer's unconfirmed messages in a journal
(as Akka's ``EventSourcedProducerQueue``: one event stored before a message
is sent, one for each confirmation), on any
[``Journal``][actors.persistence.Journal] (SQLite, memory, JetStream).

The log of producer ``p`` is persistence id ``delivery-producer|p``; its
events (``manifest``, MessagePack payload):

* ``actors.delivery.Sent@1``: ``[epoch, seq_nr, manifest, payload]``, the
  message as the queue's [``Codec``][actors.persistence.Codec] encoded it;
* ``actors.delivery.Confirmed@1``: ``[epoch, seq_nr, next_seq_nr]``,
  everything up to ``seq_nr`` confirmed (a producer's confirmations come in
  order);
* ``actors.delivery.Done@1``: ``[epoch, [seq_nr, ...], next_seq_nr]``, those
  confirmed (a work queue's jobs finish in any order).

Both confirmations carry the number after the highest one stored, so the
numbering goes on after a cleanup deleted every ``Sent`` event.

Recovery reads the log: the epoch (kept across restarts, so the numbering
goes on), the highest number sent, the highest confirmed, and the messages
sent and not confirmed, in order. Writes go through a small group commit:
the messages of every ``send`` that arrives while an append is in flight go
into the next append, one journal write for all of them, in order. Every
``cleanup_every`` confirmations the events that only hold confirmed messages
are deleted, always keeping the latest confirmation (so a restart still
knows the epoch and the numbers).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any, Final

import anyio
import msgspec
from anyio.lowlevel import cancel_shielded_checkpoint

from ..persistence import Codec, Journal, JournalError, StoredEvent
from ._validation import check_count, check_id

__all__ = ["DurableProducerQueue", "LoadedState"]

_SENT: Final = "actors.delivery.Sent@1"
_CONFIRMED: Final = "actors.delivery.Confirmed@1"
_DONE: Final = "actors.delivery.Done@1"
_PAGE: Final = 1000
_encoder = msgspec.msgpack.Encoder()
_sent_decoder = msgspec.msgpack.Decoder(tuple[str, int, str, bytes])
_confirmed_decoder = msgspec.msgpack.Decoder(tuple[str, int, int])
_done_decoder = msgspec.msgpack.Decoder(tuple[str, list[int], int])


@dataclass(frozen=True, slots=True)
class LoadedState:
    """What a queue recovered.

    Attributes:
        epoch: the producer's numbering.
        next_seq_nr: the number of the next message.
        confirmed: the highest confirmed number.
        unconfirmed: ``(seq_nr, message)`` sent and not confirmed, in order.
    """

    epoch: str
    next_seq_nr: int
    confirmed: int
    unconfirmed: list[tuple[int, Any]]


class _Batch:
    __slots__ = ("done", "error", "events")

    def __init__(self) -> None:
        self.events: list[tuple[str, bytes, int]] = []  # manifest, payload, seq
        self.done = anyio.Event()
        self.error: BaseException | None = None


class DurableProducerQueue:
    """A producer's unconfirmed messages, stored in ``journal``. Give it to
    [``ProducerController.start``][actors.delivery.ProducerController.start];
    one queue per producer id, one live producer per id (the journal's
    single-writer rule: a second process running the same producer id fails
    with ``SequenceConflict``).

    Args:
        journal: where the events go.
        codec: encodes the producer's messages (register their types on it).
        cleanup_every: confirmations between two deletions of the events
            that hold only confirmed messages.

    Raises:
        TypeError: ``journal`` is not a Journal, or ``codec`` not a Codec.
        ValueError: ``cleanup_every`` < 1.
    """

    def __init__(
        self, journal: Journal, codec: Codec, *, cleanup_every: int = 256
    ) -> None:
        if not isinstance(journal, Journal):
            raise TypeError(
                f"journal must be an actors.persistence.Journal, not {journal!r}"
            )
        if not isinstance(codec, Codec):
            raise TypeError(f"codec must be an actors.persistence.Codec, not {codec!r}")
        self.journal = journal
        self.codec = codec
        self.cleanup_every = check_count("cleanup_every", cleanup_every)
        self.persistence_id = ""
        self._epoch = ""
        self._writer = secrets.token_hex(8)
        self._highest = 0  # the journal's sequence number
        #: seq_nr -> journal number of the Sent events not confirmed, in
        #: order (so the first is the lowest of both).
        self._sent: dict[int, int] = {}
        self._confirmed = 0
        self._next = 1  # after the highest number stored
        self._last_confirm_event = 0
        self._since_cleanup = 0
        self._batch: _Batch | None = None
        self._writing = False
        self._loaded = False

    async def load(self, producer_id: str) -> LoadedState:
        """Recover producer ``producer_id``'s state (once per queue).

        Raises:
            TypeError, ValueError: ``producer_id`` is not 1-255 printable
                characters.
            RuntimeError: the queue was loaded already.
            actors.persistence.JournalError: the journal failed.
            actors.persistence.DecodeFailed: a stored message does not decode.
        """
        check_id("producer_id", producer_id)
        if self._loaded:
            raise RuntimeError(
                "a DurableProducerQueue serves one producer, loaded once"
            )
        self._loaded = True
        self.persistence_id = f"delivery-producer|{producer_id}"
        journal = self.journal
        self._highest = await journal.highest_sequence_nr(self.persistence_id)
        epoch = ""
        next_seq_nr = 1
        confirmed = 0
        messages: dict[int, tuple[int, str, bytes]] = {}
        start = 1
        while True:
            events = await journal.read_events(self.persistence_id, start, None, _PAGE)
            for event in events:
                if event.manifest == _SENT:
                    epoch, seq_nr, manifest, payload = _sent_decoder.decode(
                        event.payload
                    )
                    messages[seq_nr] = (event.sequence_nr, manifest, payload)
                    next_seq_nr = max(next_seq_nr, seq_nr + 1)
                elif event.manifest == _CONFIRMED:
                    epoch, seq_nr, after = _confirmed_decoder.decode(event.payload)
                    confirmed = max(confirmed, seq_nr)
                    next_seq_nr = max(next_seq_nr, seq_nr + 1, after)
                    self._last_confirm_event = event.sequence_nr
                elif event.manifest == _DONE:
                    epoch, done, after = _done_decoder.decode(event.payload)
                    next_seq_nr = max(next_seq_nr, after)
                    for seq_nr in done:
                        messages.pop(seq_nr, None)
                    self._last_confirm_event = event.sequence_nr
            if len(events) < _PAGE:
                break
            start = events[-1].sequence_nr + 1
        self._epoch = epoch or secrets.token_hex(8)
        self._confirmed = confirmed
        self._next = next_seq_nr
        unconfirmed: list[tuple[int, Any]] = []
        for seq_nr in sorted(messages):
            if seq_nr > confirmed:
                number, manifest, payload = messages[seq_nr]
                unconfirmed.append((seq_nr, self.codec.decode(manifest, payload)))
                self._sent[seq_nr] = number
        return LoadedState(self._epoch, next_seq_nr, confirmed, unconfirmed)

    def encode(self, message: object) -> tuple[str, bytes]:
        """``message`` by the queue's codec.

        Raises:
            actors.persistence.EventsRejected: its type is not registered
                or it cannot be encoded.
        """
        return self.codec.encode(message)

    async def store(self, seq_nr: int, encoded: tuple[str, bytes]) -> None:
        """Store message ``seq_nr`` (from ``encode``); return once it is in
        the journal. Calls must come in ``seq_nr`` order (the producer's).

        Raises:
            actors.persistence.JournalError, SequenceConflict: the append
                failed (another writer, the disk).
        """
        manifest, payload = encoded
        self._next = max(self._next, seq_nr + 1)
        event = _encoder.encode((self._epoch, seq_nr, manifest, payload))
        await self._write(_SENT, event, seq_nr)

    async def confirm(self, seq_nr: int) -> None:
        """Store that everything up to ``seq_nr`` is confirmed (and clean up
        every ``cleanup_every`` confirmations).

        Raises:
            actors.persistence.JournalError: the append failed.
        """
        if seq_nr <= self._confirmed:
            return
        self._confirmed = seq_nr
        sent = self._sent
        while sent:
            first = next(iter(sent))
            if first > seq_nr:
                break
            del sent[first]
        payload = _encoder.encode((self._epoch, seq_nr, self._next))
        await self._write(_CONFIRMED, payload, -1)
        await self._confirmed_one()

    async def done(self, seq_nrs: list[int]) -> None:
        """Store that the messages ``seq_nrs`` are confirmed, in any order
        (a work queue's finished jobs; cleans up as ``confirm``).

        Raises:
            actors.persistence.JournalError: the append failed.
        """
        if not seq_nrs:
            return
        for seq_nr in seq_nrs:
            self._sent.pop(seq_nr, None)
        payload = _encoder.encode((self._epoch, list(seq_nrs), self._next))
        await self._write(_DONE, payload, -1)
        await self._confirmed_one()

    async def _confirmed_one(self) -> None:
        self._since_cleanup += 1
        if self._since_cleanup >= self.cleanup_every:
            self._since_cleanup = 0
            await self._cleanup()

    async def _write(self, manifest: str, payload: bytes, seq_nr: int) -> None:
        batch = self._batch
        if batch is None:
            batch = self._batch = _Batch()
        batch.events.append((manifest, payload, seq_nr))
        if self._writing:
            await batch.done.wait()
            if batch.error is not None:
                raise batch.error
            return
        self._writing = True
        try:
            while self._batch is not None:
                # Writers woken at the same time as this one (by the previous
                # append: a sender's next message, a confirmation) write
                # again at once: let them join this append rather than the
                # next (a journal write per round trip, not a few per write).
                await cancel_shielded_checkpoint()
                current, self._batch = self._batch, None
                await self._append(current)
        finally:
            self._writing = False
        if batch.error is not None:
            raise batch.error

    async def _append(self, batch: _Batch) -> None:
        base = self._highest
        now = time.time()
        pid = self.persistence_id
        events = [
            StoredEvent(pid, base + i + 1, manifest, payload, self._writer, now)
            for i, (manifest, payload, _) in enumerate(batch.events)
        ]
        try:
            await self.journal.append(pid, events, base)
        except BaseException as exc:
            error: BaseException = exc
            if not isinstance(exc, Exception):
                # The writer was cancelled mid-append (or worse): the senders
                # waiting on this batch and the next must not wait forever.
                error = JournalError(
                    f"the append to {pid!r} was interrupted ({type(exc).__name__}): "
                    "whether it was stored is unknown"
                )
                error.__cause__ = exc
            batch.error = error
            # The next batch fails too: once an append failed, the log's end
            # is unknown (a new controller on a new queue recovers from it).
            pending, self._batch = self._batch, None
            if pending is not None:
                pending.error = error
                pending.done.set()
            batch.done.set()
            if error is not exc:
                raise
            return
        self._highest = base + len(events)
        for i, (manifest, _, seq_nr) in enumerate(batch.events):
            number = base + i + 1
            if manifest == _SENT:
                self._sent[seq_nr] = number
            else:
                self._last_confirm_event = number
        batch.done.set()

    async def _cleanup(self) -> None:
        keep_from = self._last_confirm_event
        if self._sent:
            keep_from = min(keep_from, next(iter(self._sent.values())))
        if keep_from > 1:
            await self.journal.delete_events(self.persistence_id, keep_from - 1)

    def __repr__(self) -> str:
        pid, confirmed = self.persistence_id, self._confirmed
        return f"DurableProducerQueue({pid!r}, confirmed={confirmed})"
