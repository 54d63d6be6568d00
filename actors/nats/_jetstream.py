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
* Reading: ``get_msg``, ``get_msgs``, ``subject_msgs`` and ``last_msgs``,
  without a consumer (see ``_jetstream_reading``).
* Key-value buckets (``create_key_value``, ``key_value``): see ``_kv``.

Errors are ``JetStreamError`` with the API's error code, as the subclass a
program handles (``StreamNotFoundError``, ``WrongLastSequenceError``, ...).
Answers are parsed as untrusted input (``_jetstream_types``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ._arguments import integer, positive
from ._errors import (
    BucketNotFoundError,
    JetStreamNotEnabledError,
    NoRespondersError,
    NoStreamResponseError,
    StreamNotFoundError,
)
from ._jetstream_reading import StreamReading
from ._jetstream_types import (
    PubAck,
    StreamConfig,
    StreamInfo,
    check_name,
    parse_api,
)
from ._kv import KeyValue, KeyValueConfig
from ._protocol import check_subject

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["JetStream"]

#: The usual publish acknowledgement (anything else goes through ``json``).
_PLAIN_ACK: Final = re.compile(
    rb'\{"stream":"([A-Za-z0-9_-]{1,255})","seq":([1-9][0-9]{0,18})\}'
).fullmatch


class JetStream(StreamReading):
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
