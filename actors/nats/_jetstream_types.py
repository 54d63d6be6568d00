"""The JetStream API's records: a stream's configuration and state, a
publish acknowledgement, a stored message; and the checks of what the
server's JSON holds (its answers are parsed as untrusted: a field of the
wrong type is a ``JetStreamError``, never a ``KeyError`` deep in a caller).

Durations are seconds here and nanoseconds on the wire (the API's
``max_age`` and ``duplicate_window``), as nats.py's ``StreamConfig``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal

from ._errors import (
    JetStreamError,
    JetStreamNotEnabledError,
    MessageNotFoundError,
    StreamNameInUseError,
    StreamNotFoundError,
    WrongLastSequenceError,
)

__all__ = [
    "PubAck",
    "StoredMsg",
    "StreamConfig",
    "StreamInfo",
    "StreamState",
    "api_error",
    "check_name",
    "parse_api",
]

_NANOS: Final = 1_000_000_000
_BAD_NAME = re.compile(r"[\s.*>/\\]")

#: JetStream error codes with their own exception class.
_BY_ERR_CODE: Final[dict[int, type[JetStreamError]]] = {
    10037: MessageNotFoundError,
    10039: JetStreamNotEnabledError,
    10058: StreamNameInUseError,
    10059: StreamNotFoundError,
    10071: WrongLastSequenceError,
    10076: JetStreamNotEnabledError,
}


def check_name(value: object, what: str = "stream name") -> str:
    """``value`` if it can name a stream (or a bucket): a non-empty str
    without whitespace, ``.``, ``*``, ``>`` or path separators.

    Raises:
        TypeError: it is not a str.
        ValueError: it is empty or holds one of those characters.
    """
    if type(value) is not str:
        raise TypeError(f"a {what} is a str, not {value!r}")
    if not value or _BAD_NAME.search(value):
        raise ValueError(
            f"a {what} is non-empty without whitespace, '.', '*', '>', '/' "
            f"or '\\\\': {value!r}"
        )
    return value


def api_error(error: object) -> JetStreamError:
    """The exception for the ``error`` object of an API answer."""
    if not isinstance(error, dict):
        return JetStreamError(0, 0, f"malformed error in an API answer: {error!r}")
    code = error.get("code")
    err_code = error.get("err_code")
    description = error.get("description")
    code = code if type(code) is int else 0
    err_code = err_code if type(err_code) is int else 0
    text = description if type(description) is str else "(no description)"
    return _BY_ERR_CODE.get(err_code, JetStreamError)(code, err_code, text)


def parse_api(data: bytes, subject: str) -> dict[str, Any]:
    """The JSON object of an API answer.

    Raises:
        JetStreamError: it is not a JSON object, or it is an API error (the
            subclass for its error code).
    """
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise JetStreamError(
            0, 0, f"the answer on {subject!r} is not a JSON object: {data[:80]!r}"
        )
    error = answer.get("error")
    if error is not None:
        raise api_error(error)
    return answer


def _get(obj: Mapping[str, Any], key: str, kind: type, default: Any = None) -> Any:
    value = obj.get(key, default)
    if value is None and default is None:
        return None
    if type(value) is not kind and not (kind is float and type(value) is int):
        raise JetStreamError(
            0, 0, f"the API answer's {key!r} is not a {kind.__name__}: {value!r}"
        )
    return value


def _seconds(nanos: object) -> float:
    return float(nanos) / _NANOS if type(nanos) is int else 0.0


Storage = Literal["file", "memory"]
Retention = Literal["limits", "interest", "workqueue"]
Discard = Literal["old", "new"]


@dataclass(frozen=True)
class StreamConfig:
    """The configuration of a stream (the API's ``StreamConfig``; defaults
    as the server's, except ``allow_direct``, on here).

    Attributes:
        name: the stream's name (no whitespace, ``.``, ``*``, ``>``).
        subjects: the subjects it stores (wildcards allowed).
        storage: ``"file"`` (survives a server restart) or ``"memory"``.
        retention: ``"limits"``, ``"interest"`` or ``"workqueue"``.
        max_msgs: the most messages kept (-1: no limit).
        max_bytes: the most bytes kept (-1: no limit).
        max_age: the oldest message kept, in seconds (0: no limit).
        max_msgs_per_subject: the most messages kept per subject (-1: no
            limit; a key-value bucket's history).
        max_msg_size: the largest message accepted, in bytes (-1: the
            server's ``max_payload``).
        discard: at a limit, drop the ``"old"`` messages or refuse ``"new"``
            ones.
        num_replicas: copies in a cluster.
        duplicate_window: seconds during which a ``Nats-Msg-Id`` already
            stored makes a publish a duplicate (acknowledged, not stored).
        allow_direct: answer direct gets (``JetStream.get_msg``,
            ``get_msgs``): reads that any replica serves.
        allow_rollup_hdrs: allow ``Nats-Rollup`` (purge with a publish).
        deny_delete: refuse deleting single messages.
        deny_purge: refuse purges.
        allow_msg_ttl: allow ``Nats-TTL`` per message (server 2.11+).
        description: a description, or None.
    """

    name: str
    subjects: tuple[str, ...] = ()
    storage: Storage = "file"
    retention: Retention = "limits"
    max_msgs: int = -1
    max_bytes: int = -1
    max_age: float = 0.0
    max_msgs_per_subject: int = -1
    max_msg_size: int = -1
    discard: Discard = "old"
    num_replicas: int = 1
    duplicate_window: float = 120.0
    allow_direct: bool = True
    allow_rollup_hdrs: bool = False
    deny_delete: bool = False
    deny_purge: bool = False
    allow_msg_ttl: bool = False
    description: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name)
        if isinstance(self.subjects, str):
            raise TypeError("subjects is a sequence of str, not one str")
        object.__setattr__(self, "subjects", tuple(self.subjects))
        for subject in self.subjects:
            if type(subject) is not str or not subject or " " in subject:
                raise ValueError(f"bad subject in a StreamConfig: {subject!r}")
        if self.storage not in ("file", "memory"):
            raise ValueError(f"storage is 'file' or 'memory', not {self.storage!r}")
        if self.discard not in ("old", "new"):
            raise ValueError(f"discard is 'old' or 'new', not {self.discard!r}")
        if self.retention not in ("limits", "interest", "workqueue"):
            raise ValueError(f"bad retention {self.retention!r}")
        for name in ("max_age", "duplicate_window"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} is seconds, not {value!r}")
            if not value >= 0:
                raise ValueError(f"{name} must be >= 0 seconds, not {value!r}")

    def to_api(self) -> dict[str, Any]:
        """The API's JSON object for this configuration."""
        body: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in ("max_age", "duplicate_window"):
                value = int(value * _NANOS)
            elif item.name == "subjects":
                value = list(value)
            elif value is None:
                continue
            body[item.name] = value
        return body

    @classmethod
    def from_api(cls, body: object) -> StreamConfig:
        """A configuration from the API's JSON object (unknown fields are
        ignored).

        Raises:
            JetStreamError: a field has the wrong type.
        """
        if not isinstance(body, dict):
            raise JetStreamError(0, 0, f"a stream config is not an object: {body!r}")
        known: dict[str, Any] = {}
        for item in fields(cls):
            if item.name not in body:
                continue
            value = body[item.name]
            if item.name in ("max_age", "duplicate_window"):
                value = _seconds(value)
            elif item.name == "subjects":
                if not isinstance(value, list):
                    raise JetStreamError(0, 0, f"subjects is not a list: {value!r}")
                value = tuple(value)
            known[item.name] = value
        try:
            return cls(**known)
        except (TypeError, ValueError) as exc:
            raise JetStreamError(0, 0, f"a bad stream config: {exc}") from None


@dataclass(frozen=True)
class StreamState:
    """A stream's counters (the API's ``StreamState``).

    Attributes:
        messages: messages stored.
        bytes: bytes stored.
        first_seq: the sequence of the first stored message.
        last_seq: the sequence of the last message ever stored.
        consumer_count: consumers of the stream.
        num_subjects: distinct subjects stored.
        num_deleted: deleted messages between the first and the last.
    """

    messages: int = 0
    bytes: int = 0
    first_seq: int = 0
    last_seq: int = 0
    consumer_count: int = 0
    num_subjects: int = 0
    num_deleted: int = 0

    @classmethod
    def from_api(cls, body: object) -> StreamState:
        """A state from the API's JSON object.

        Raises:
            JetStreamError: it is not an object, or a counter not an int.
        """
        if not isinstance(body, dict):
            raise JetStreamError(0, 0, f"a stream state is not an object: {body!r}")
        return cls(**{item.name: _get(body, item.name, int, 0) for item in fields(cls)})


@dataclass(frozen=True)
class StreamInfo:
    """What ``JetStream.stream_info`` (and creating or updating) returns.

    Attributes:
        config: the stream's configuration as the server holds it.
        state: its counters now.
        created: when it was made (RFC 3339 text).
    """

    config: StreamConfig
    state: StreamState
    created: str = ""

    @classmethod
    def from_api(cls, body: Mapping[str, Any]) -> StreamInfo:
        """The info from an API answer.

        Raises:
            JetStreamError: a part is missing or of the wrong type.
        """
        return cls(
            StreamConfig.from_api(body.get("config")),
            StreamState.from_api(body.get("state", {})),
            _get(body, "created", str, ""),
        )


@dataclass(frozen=True)
class PubAck:
    """The acknowledgement of a JetStream publish: the message is stored.

    Attributes:
        stream: the stream that stored it.
        seq: its stream sequence (for a duplicate: the original's).
        duplicate: its ``Nats-Msg-Id`` was stored already within the
            duplicate window: this publish stored nothing new.
        domain: the JetStream domain, or None.
    """

    stream: str
    seq: int
    duplicate: bool = False
    domain: str | None = None

    @classmethod
    def from_api(cls, body: Mapping[str, Any]) -> PubAck:
        """The acknowledgement from the server's answer.

        Raises:
            JetStreamError: ``stream`` or ``seq`` is missing or mistyped.
        """
        stream = _get(body, "stream", str)
        seq = _get(body, "seq", int)
        if stream is None or seq is None or seq < 1:
            raise JetStreamError(0, 0, f"a malformed publish acknowledgement: {body}")
        return cls(
            stream,
            seq,
            _get(body, "duplicate", bool, False),
            _get(body, "domain", str),
        )


@dataclass(frozen=True)
class StoredMsg:
    """A message as a stream stores it (a get's answer).

    Attributes:
        subject: the subject it was published to.
        seq: its stream sequence.
        data: its payload.
        headers: the headers it was published with (the server's own
            ``Nats-Stream``, ``Nats-Sequence``, ... of a direct get removed).
        time: when it was stored (RFC 3339 text, UTC).
    """

    subject: str
    seq: int
    data: bytes
    headers: dict[str, str] = field(default_factory=dict)
    time: str = ""
