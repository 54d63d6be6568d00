"""JetStream: the persistence layer of ``nats-server -js``, through its JSON
request/reply API (``$JS.API.*``), on the core client's requests.

* Streams: ``add_stream`` / ``update_stream`` / ``stream_info`` /
  ``delete_stream`` / ``purge_stream`` (``$JS.API.STREAM.*``).
* Publishing with an acknowledgement (``publish`` -> ``PubAck``): a request
  to the stream's subject, its options as the headers JetStream reads
  (``Nats-Msg-Id`` for deduplication within the stream's duplicate window,
  ``Nats-Expected-Last-Subject-Sequence`` / ``Nats-Expected-Last-Sequence``
  / ``Nats-Expected-Stream`` for conditional appends, ``Nats-TTL``). Many
  publishes may be in flight at once (one task each): their requests go out
  in the client's batched writes and each waits for its own acknowledgement,
  as nats.py's ``publish_async``.
* Reading: ``get_msg`` (one message by sequence, the last of a subject, or
  the next of a subject from a sequence), ``get_msgs`` (a batch of one
  subject's messages from a sequence, in order), ``subject_msgs`` (all of
  them, batch after batch) and ``last_msgs`` (the last message of each
  subject matching filters): the direct get API (``$JS.API.DIRECT.GET``,
  streams with ``allow_direct``; batches need server 2.11+), without a
  consumer.
* Key-value buckets (``create_key_value``, ``key_value``): see ``_kv``.

Errors are ``JetStreamError`` with the API's error code, as the subclass a
program handles (``StreamNotFoundError``, ``WrongLastSequenceError``, ...).
Answers are parsed as untrusted input (``_jetstream_types``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ._arguments import integer, positive
from ._errors import (
    BucketNotFoundError,
    JetStreamError,
    JetStreamNotEnabledError,
    MessageNotFoundError,
    NoRespondersError,
    NoStreamResponseError,
    StreamNotFoundError,
)
from ._jetstream_types import (
    PubAck,
    StoredMsg,
    StreamConfig,
    StreamInfo,
    check_name,
    parse_api,
)
from ._kv import KeyValue, KeyValueConfig
from ._protocol import Msg, check_subject, parse_headers

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["JetStream"]

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
#: The usual publish acknowledgement (anything else goes through ``json``).
_PLAIN_ACK: Final = re.compile(
    rb'\{"stream":"([A-Za-z0-9_-]{1,255})","seq":([1-9][0-9]{0,18})\}'
).fullmatch
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


class JetStream:
    """The JetStream API over a ``Client`` (``client.jetstream()``).

    Args:
        client: the connected client.
        prefix: the API's subject prefix (``"$JS.API"``; another for a
            JetStream domain: ``"$JS.<domain>.API"``).
        timeout: seconds an API request or publish waits for its answer.

    Raises:
        TypeError / ValueError: a bad ``prefix`` or ``timeout``.
    """

    def __init__(
        self, client: Client, *, prefix: str = "$JS.API", timeout: float = 5.0
    ) -> None:
        check_subject(prefix, "prefix")
        self.client = client
        self.prefix = prefix
        self.timeout = positive("timeout", timeout)

    def __repr__(self) -> str:
        return f"<JetStream {self.prefix!r} on {self.client.connected_url}>"

    # -- the API -------------------------------------------------------------

    async def api_request(
        self,
        suffix: str,
        body: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """One request of the JSON API: ``<prefix>.<suffix>`` with ``body``.

        Returns:
            The answer's JSON object.

        Raises:
            JetStreamNotEnabledError: nothing answers (no JetStream).
            JetStreamError: the API answered with an error (its subclass).
            RequestTimeoutError: no answer within ``timeout`` seconds
                (default: the context's).
            ConnectionClosedError: the client is closed.
        """
        subject = f"{self.prefix}.{suffix}"
        payload = b"" if body is None else json.dumps(body).encode()
        try:
            reply = await self.client.request(
                subject, payload, timeout=self.timeout if timeout is None else timeout
            )
        except NoRespondersError:
            raise JetStreamNotEnabledError(
                503, 0, f"nothing answers on {subject!r}: is JetStream enabled?"
            ) from None
        return parse_api(reply.data, subject)

    async def account_info(self) -> dict[str, Any]:
        """The account's JetStream usage and limits (``$JS.API.INFO``)."""
        return await self.api_request("INFO")

    # -- streams ---------------------------------------------------------------

    async def add_stream(self, config: StreamConfig) -> StreamInfo:
        """Create a stream; creating one that exists with the same
        configuration returns its info.

        Raises:
            StreamNameInUseError: it exists with another configuration.
            JetStreamError: the server refused the configuration.
        """
        if not isinstance(config, StreamConfig):
            raise TypeError(f"config must be a StreamConfig, not {config!r}")
        answer = await self.api_request(f"STREAM.CREATE.{config.name}", config.to_api())
        return StreamInfo.from_api(answer)

    async def update_stream(self, config: StreamConfig) -> StreamInfo:
        """Change a stream's configuration (what the server allows to change).

        Raises:
            StreamNotFoundError: there is no such stream.
            JetStreamError: the server refused the change.
        """
        if not isinstance(config, StreamConfig):
            raise TypeError(f"config must be a StreamConfig, not {config!r}")
        answer = await self.api_request(f"STREAM.UPDATE.{config.name}", config.to_api())
        return StreamInfo.from_api(answer)

    async def stream_info(self, name: str) -> StreamInfo:
        """A stream's configuration and state.

        Raises:
            StreamNotFoundError: there is no such stream.
        """
        answer = await self.api_request(f"STREAM.INFO.{check_name(name)}")
        return StreamInfo.from_api(answer)

    async def delete_stream(self, name: str) -> None:
        """Delete a stream and its messages.

        Raises:
            StreamNotFoundError: there is no such stream.
        """
        await self.api_request(f"STREAM.DELETE.{check_name(name)}")

    async def purge_stream(
        self,
        name: str,
        *,
        subject: str | None = None,
        seq: int | None = None,
        keep: int | None = None,
    ) -> int:
        """Remove messages: all, or those of ``subject`` (a filter), those
        below the stream sequence ``seq``, or all but the last ``keep``.

        Returns:
            The number of messages purged.

        Raises:
            StreamNotFoundError: there is no such stream.
            ValueError: both ``seq`` and ``keep`` are given.
        """
        body: dict[str, Any] = {}
        if subject is not None:
            check_subject(subject)
            body["filter"] = subject
        if seq is not None and keep is not None:
            raise ValueError("purge_stream takes seq or keep, not both")
        if seq is not None:
            body["seq"] = integer("seq", seq, 1)
        if keep is not None:
            body["keep"] = integer("keep", keep, 0)
        answer = await self.api_request(f"STREAM.PURGE.{check_name(name)}", body)
        purged = answer.get("purged", 0)
        return purged if type(purged) is int else 0

    # -- publishing ------------------------------------------------------------

    async def publish(
        self,
        subject: str,
        payload: bytes = b"",
        *,
        headers: Mapping[str, str] | None = None,
        msg_id: str | None = None,
        expected_stream: str | None = None,
        expected_last_sequence: int | None = None,
        expected_last_subject_sequence: int | None = None,
        ttl: float | None = None,
        timeout: float | None = None,
    ) -> PubAck:
        """Publish to a stream's subject and wait for the stream to store it.

        Args:
            subject: a subject a stream takes.
            payload: the message's payload.
            headers: more headers, or None.
            msg_id: ``Nats-Msg-Id``: a publish with an id the stream stored
                within its duplicate window stores nothing and is
                acknowledged as a duplicate (a retry after a lost
                acknowledgement is safe).
            expected_stream: ``Nats-Expected-Stream``: only into this stream.
            expected_last_sequence: ``Nats-Expected-Last-Sequence``: only if
                the stream's last sequence is this.
            expected_last_subject_sequence:
                ``Nats-Expected-Last-Subject-Sequence``: only if the last
                message of ``subject`` has this stream sequence (0: the
                subject has none): an optimistic-concurrency append.
            ttl: ``Nats-TTL`` in seconds (streams with ``allow_msg_ttl``).
            timeout: seconds to wait for the acknowledgement (default: the
                context's).

        Returns:
            The acknowledgement.

        Raises:
            WrongLastSequenceError: an expected sequence did not hold;
                nothing was stored.
            NoStreamResponseError: no stream takes ``subject``.
            JetStreamError: the stream refused the message (its error code).
            RequestTimeoutError: no acknowledgement within ``timeout``: the
                message may or may not be stored (retry with the same
                ``msg_id``).
            Exception: what ``Client.publish`` raises for bad arguments.
        """
        extra: dict[str, str] = dict(headers) if headers else {}
        if msg_id is not None:
            extra["Nats-Msg-Id"] = msg_id
        if expected_stream is not None:
            extra["Nats-Expected-Stream"] = check_name(expected_stream)
        if expected_last_sequence is not None:
            extra["Nats-Expected-Last-Sequence"] = str(
                integer("expected_last_sequence", expected_last_sequence, 0)
            )
        if expected_last_subject_sequence is not None:
            extra["Nats-Expected-Last-Subject-Sequence"] = str(
                integer(
                    "expected_last_subject_sequence", expected_last_subject_sequence, 0
                )
            )
        if ttl is not None:
            extra["Nats-TTL"] = f"{max(1, round(positive('ttl', ttl)))}s"
        try:
            reply = await self.client.request(
                subject,
                payload,
                timeout=self.timeout if timeout is None else timeout,
                headers=extra or None,
            )
        except NoRespondersError:
            raise NoStreamResponseError(
                503, 0, f"no stream takes the subject {subject!r}"
            ) from None
        # The usual acknowledgement, {"stream":"S","seq":N}, without the JSON
        # parser (the fields a JSON object of another shape would have are
        # checked the long way).
        match = _PLAIN_ACK(reply.data)
        if match is not None and reply.status is None:
            return PubAck(match[1].decode(), int(match[2]))
        return PubAck.from_api(parse_api(reply.data, subject))

    # -- reading ----------------------------------------------------------------

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

    # -- key-value ----------------------------------------------------------------

    async def create_key_value(self, config: KeyValueConfig) -> KeyValue:
        """Create a key-value bucket (or open it if it exists with the same
        configuration): see ``KeyValue``.

        Raises:
            StreamNameInUseError: it exists with another configuration.
        """
        if not isinstance(config, KeyValueConfig):
            raise TypeError(f"config must be a KeyValueConfig, not {config!r}")
        await self.add_stream(config.stream_config())
        return KeyValue(self, config.bucket)

    async def key_value(self, bucket: str) -> KeyValue:
        """Open an existing key-value bucket.

        Raises:
            BucketNotFoundError: there is no such bucket.
        """
        check_name(bucket, "bucket name")
        try:
            await self.stream_info(f"KV_{bucket}")
        except StreamNotFoundError as exc:
            raise BucketNotFoundError(exc.code, exc.err_code, exc.description) from None
        return KeyValue(self, bucket)

    async def delete_key_value(self, bucket: str) -> None:
        """Delete a key-value bucket and its entries.

        Raises:
            StreamNotFoundError: there is no such bucket.
        """
        check_name(bucket, "bucket name")
        await self.delete_stream(f"KV_{bucket}")


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
