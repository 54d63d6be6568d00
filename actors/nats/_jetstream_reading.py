"""Reading a stream without a consumer (a base class of
[``JetStream``][actors.nats.JetStream], one concept of it): ``get_msg`` (one
message by sequence, the last of a subject, or the next of a subject from a
sequence), ``get_msgs`` (a batch of one subject's messages from a sequence,
in order), ``subject_msgs`` (all of them, batch after batch) and
``last_msgs`` (the last message of each subject matching filters), through
the direct get API (``$JS.API.DIRECT.GET``, streams with ``allow_direct``;
batches need server 2.11+) or ``STREAM.MSG.GET``. Replies are parsed as
untrusted input: a stored message needs its headers.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ._arguments import integer
from ._errors import (
    JetStreamError,
    MessageNotFoundError,
    NoRespondersError,
    StreamNotFoundError,
)
from ._jetstream_types import StoredMsg, check_name
from ._protocol import Msg, check_subject, parse_headers

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["MAX_BATCH", "StreamReading"]

#: Headers a direct get adds to the stored message's own.
_DIRECT_HEADERS: Final = frozenset(
    (
        "Nats-Stream",
        "Nats-Subject",
        "Nats-Sequence",
        "Nats-Time-Stamp",
        "Nats-Num-Pending",
        "Nats-Last-Sequence",
        "Nats-UpTo-Sequence",
    )
)
#: The most messages one direct get batch asks for.
MAX_BATCH: Final = 10_000


def _stored(msg: Msg, stream: str) -> StoredMsg:
    """The stored message of a direct get's reply.

    Raises:
        MessageNotFoundError: the reply is the 404 status.
        JetStreamError: another status, or headers missing or malformed.
    """
    status = msg.status
    if status is not None:
        if status == 404:
            raise MessageNotFoundError(404, 10037, msg.description or "not found")
        if status == 503:
            raise StreamNotFoundError(
                503, 10059, f"no stream {stream!r} answers direct gets"
            )
        raise JetStreamError(status, 0, msg.description or "direct get failed")
    headers = msg.headers or {}
    subject = headers.get("Nats-Subject")
    seq = headers.get("Nats-Sequence", "")
    if not subject or not seq.isdigit():
        raise JetStreamError(0, 0, f"a direct get reply without its headers: {msg!r}")
    own = {k: v for k, v in headers.items() if k not in _DIRECT_HEADERS}
    return StoredMsg(
        subject, int(seq), msg.data, own, headers.get("Nats-Time-Stamp", "")
    )


class StreamReading:
    """The reads of a stream (see the module doc); the client, prefix and
    timeout are ``JetStream``'s."""

    #: Set by ``JetStream.__init__`` (see there).
    client: Client
    prefix: str
    timeout: float

    if TYPE_CHECKING:

        async def api_request(
            self,
            suffix: str,
            body: Mapping[str, Any] | None = None,
            *,
            timeout: float | None = None,
        ) -> dict[str, Any]:
            """``JetStream.api_request``."""
            ...


    async def get_msg(
        self,
        stream: str,
        seq: int | None = None,
        *,
        last_by_subject: str | None = None,
        next_by_subject: str | None = None,
        direct: bool = True,
    ) -> StoredMsg:
        """One stored message: by stream sequence ``seq``; the last of
        ``last_by_subject``; or the first of ``next_by_subject`` at or after
        ``seq`` (default 1).

        Args:
            direct: through the direct get API (any replica answers; the
                stream needs ``allow_direct``), else ``STREAM.MSG.GET``
                (the leader answers).

        Raises:
            MessageNotFoundError: no message matches.
            StreamNotFoundError: no such stream (or no direct gets).
            ValueError: the arguments do not name one kind of get.
        """
        check_name(stream)
        body: dict[str, Any] = {}
        if last_by_subject is not None:
            if seq is not None or next_by_subject is not None:
                raise ValueError("last_by_subject takes no seq or next_by_subject")
            check_subject(last_by_subject, "last_by_subject")
            body["last_by_subj"] = last_by_subject
        elif next_by_subject is not None:
            check_subject(next_by_subject, "next_by_subject")
            body["seq"] = 1 if seq is None else integer("seq", seq, 0)
            body["next_by_subj"] = next_by_subject
        elif seq is not None:
            body["seq"] = integer("seq", seq, 1)
        else:
            raise ValueError("get_msg needs seq, last_by_subject or next_by_subject")
        if direct:
            subject = f"{self.prefix}.DIRECT.GET.{stream}"
            try:
                reply = await self.client.request(
                    subject, json.dumps(body).encode(), timeout=self.timeout
                )
            except NoRespondersError:
                raise StreamNotFoundError(
                    503, 10059, f"no stream {stream!r} answers direct gets"
                ) from None
            return _stored(reply, stream)
        answer = await self.api_request(f"STREAM.MSG.GET.{stream}", body)
        return _from_msg_get(answer)

    async def get_msgs(
        self,
        stream: str,
        subject: str,
        *,
        start_seq: int = 1,
        batch: int = 256,
        max_bytes: int | None = None,
    ) -> list[StoredMsg]:
        """Up to ``batch`` messages of ``subject`` (a filter: wildcards
        allowed) from the stream sequence ``start_seq`` on, in order; fewer
        when ``max_bytes`` of them are reached or none are left; ``[]`` when
        there is none. One direct get batch (server 2.11+).

        Raises:
            StreamNotFoundError: no such stream (or no direct gets).
            JetStreamError: the server refused the request.
            RequestTimeoutError: the batch did not end within the timeout.
        """
        check_name(stream)
        check_subject(subject)
        body: dict[str, Any] = {
            "seq": integer("start_seq", start_seq, 0),
            "next_by_subj": subject,
            "batch": min(integer("batch", batch, 1), MAX_BATCH),
        }
        if max_bytes is not None:
            body["max_bytes"] = integer("max_bytes", max_bytes, 1)
        return await self._batch(stream, body)

    async def last_msgs(
        self, stream: str, subjects: Sequence[str], *, batch: int = 1024
    ) -> list[StoredMsg]:
        """The last message of each subject matching ``subjects`` (filters),
        at most ``batch`` of them (server 2.11+).

        Raises:
            StreamNotFoundError: no such stream (or no direct gets).
            JetStreamError: the server refused it (too many subjects match).
        """
        check_name(stream)
        if isinstance(subjects, str):
            raise TypeError("subjects is a sequence of str, not one str")
        for subject in subjects:
            check_subject(subject)
        body = {
            "multi_last": list(subjects),
            "batch": min(integer("batch", batch, 1), MAX_BATCH),
        }
        return await self._batch(stream, body)

    async def subject_msgs(
        self,
        stream: str,
        subject: str,
        *,
        start_seq: int = 1,
        end_seq: int | None = None,
        batch: int = 256,
    ) -> AsyncIterator[StoredMsg]:
        """Every message of ``subject`` from ``start_seq`` to ``end_seq``
        (None: the last), in order, fetched ``batch`` at a time.

        Raises:
            Exception: what ``get_msgs`` raises.
        """
        seq = start_seq
        while True:
            found = await self.get_msgs(stream, subject, start_seq=seq, batch=batch)
            for msg in found:
                if end_seq is not None and msg.seq > end_seq:
                    return
                yield msg
            if len(found) < batch:
                return
            seq = found[-1].seq + 1

    async def _batch(self, stream: str, body: dict[str, Any]) -> list[StoredMsg]:
        client = self.client
        inbox = client.new_inbox()
        sub = await client.subscribe(inbox, max_pending=body["batch"] + 8)
        found: list[StoredMsg] = []
        try:
            await client.publish(
                f"{self.prefix}.DIRECT.GET.{stream}",
                json.dumps(body).encode(),
                reply=inbox,
            )
            while True:
                msg = await sub.next_msg(timeout=self.timeout)
                if msg.status == 204:  # the end of the batch
                    return found
                try:
                    found.append(_stored(msg, stream))
                except MessageNotFoundError:
                    return found
        except TimeoutError:
            raise JetStreamError(
                408, 0, f"a direct get batch of {stream!r} did not end in time"
            ) from None
        finally:
            await sub.unsubscribe()


def _from_msg_get(answer: Mapping[str, Any]) -> StoredMsg:
    """The stored message of a ``STREAM.MSG.GET`` answer (base64 fields)."""
    message = answer.get("message")
    if not isinstance(message, dict):
        raise JetStreamError(0, 0, f"a message get answer without a message: {answer}")
    subject, seq = message.get("subject"), message.get("seq")
    if type(subject) is not str or type(seq) is not int:
        raise JetStreamError(0, 0, f"a malformed stored message: {message}")
    try:
        data = base64.b64decode(message.get("data") or "", validate=True)
        raw = base64.b64decode(message.get("hdrs") or "", validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise JetStreamError(0, 0, "a stored message's base64 is malformed") from None
    headers = parse_headers(raw)[0] if raw else {}
    time = message.get("time")
    return StoredMsg(subject, seq, data, headers, time if type(time) is str else "")
