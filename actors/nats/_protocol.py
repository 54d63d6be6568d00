"""NATS's core text protocol: the message type, an incremental parser of what a
server sends, and encoders of what a client sends.

Facts from the NATS client protocol reference: every control line ends with
CRLF; ``MSG <subject> <sid> [reply-to] <#bytes>`` and ``HMSG <subject> <sid>
[reply-to] <#header bytes> <#total bytes>`` are followed by their payload and a
CRLF; a header block starts with ``NATS/1.0`` (optionally a status code and a
description, as ``NATS/1.0 503`` for no responders) and ends with an empty line.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from typing import Any, Final

from ._errors import ProtocolError

__all__ = [
    "OK",
    "PING",
    "PONG",
    "ErrLine",
    "Msg",
    "Parser",
    "ServerInfo",
    "encode_headers",
    "new_nuid",
]

#: the longest control line accepted from a server (the server's own default
#: ``max_control_line`` is 4 KiB; a longer line from a server is garbage)
MAX_CONTROL_LINE: Final = 64 * 1024

_CRLF: Final = b"\r\n"
_HEADER_VERSION: Final = "NATS/1.0"
_BAD_TOKEN = re.compile(r"[\s]")
_BAD_HEADER_KEY = re.compile(r"[\s:]")
#: Header keys checked already (a program uses a handful; bounded all the same).
_GOOD_KEYS: set[str] = set()
_MAX_GOOD_KEYS: Final = 256
_BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def new_nuid(length: int = 22) -> str:
    """A random base62 identifier, as NATS's NUIDs (22 characters by default)."""
    return "".join(secrets.choice(_BASE62) for _ in range(length))


class Msg:
    """A message delivered to a subscription.

    Attributes:
        subject: the subject it was published to.
        sid: the id of the subscription that received it.
        reply: the reply subject, or ``None``.
        data: the payload.
        headers: the headers (a key sent more than once has its values joined
            with ``", "``), or ``None`` when the message had no header block.
        status: the status code of the header block (``503`` for no
            responders), or ``None``.
        description: the status description, or ``""``.
    """

    __slots__ = ("data", "description", "headers", "reply", "sid", "status", "subject")

    def __init__(
        self,
        subject: str,
        sid: int,
        reply: str | None,
        data: bytes,
        headers: dict[str, str] | None = None,
        status: int | None = None,
        description: str = "",
    ) -> None:
        self.subject = subject
        self.sid = sid
        self.reply = reply
        self.data = data
        self.headers = headers
        self.status = status
        self.description = description

    def __repr__(self) -> str:
        return (
            f"Msg(subject={self.subject!r}, sid={self.sid}, reply={self.reply!r}, "
            f"data={self.data[:32]!r}, headers={self.headers!r}, "
            f"status={self.status!r})"
        )


class ServerInfo(dict[str, Any]):
    """The JSON object of a server's ``INFO``."""


class ErrLine(str):
    """The text of a server's ``-ERR`` (quotes removed)."""

    __slots__ = ()


class _Control:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


PING: Final = _Control("PING")
PONG: Final = _Control("PONG")
OK: Final = _Control("+OK")

Op = Msg | ServerInfo | ErrLine | _Control


def check_subject(subject: str, argument: str = "subject") -> None:
    """Raise unless ``subject`` can be sent in a control line.

    Raises:
        TypeError: it is not a ``str``.
        ValueError: it is empty or contains whitespace.
    """
    if type(subject) is not str:
        raise TypeError(f"{argument} must be a str, not {type(subject).__name__}")
    if not subject or _BAD_TOKEN.search(subject):
        raise ValueError(
            f"{argument} must be non-empty without whitespace: {subject!r}"
        )


def encode_headers(headers: Mapping[str, str]) -> bytes:
    """Encode a header block (``NATS/1.0`` line, ``Key: Value`` lines, empty line).

    Raises:
        TypeError: a key or value is not a ``str``.
        ValueError: a key is empty or has whitespace or ``:``; a value has CR or LF.
    """
    parts = [_HEADER_VERSION]
    good = _GOOD_KEYS
    for key, value in headers.items():
        if type(key) is not str or type(value) is not str:
            raise TypeError("headers keys and values must be str")
        if key not in good:
            if not key or _BAD_HEADER_KEY.search(key):
                raise ValueError(f"headers: invalid key {key!r}")
            if len(good) < _MAX_GOOD_KEYS:
                good.add(key)
        if "\r" in value or "\n" in value:
            raise ValueError(f"headers: the value of {key!r} contains CR or LF")
        parts.append(f"{key}: {value}")
    parts.append("\r\n")
    return "\r\n".join(parts).encode()


def parse_headers(raw: bytes) -> tuple[dict[str, str], int | None, str]:
    """Decode a header block into (headers, status, description).

    Raises:
        ProtocolError: it is not a NATS/1.0 header block.
    """
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        raise ProtocolError("header block is not UTF-8") from exc
    lines = text.split("\r\n")
    first = lines[0]
    if not first.startswith(_HEADER_VERSION):
        raise ProtocolError(
            f"header block does not start with NATS/1.0: {first[:40]!r}"
        )
    status: int | None = None
    description = ""
    rest = first[len(_HEADER_VERSION) :].strip()
    if rest:
        code, _, description = rest.partition(" ")
        try:
            status = int(code)
        except ValueError:
            raise ProtocolError(f"bad status in header block: {first[:40]!r}") from None
        description = description.strip()
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        key, sep, value = line.partition(":")
        if not sep or not key:
            raise ProtocolError(f"bad header line: {line[:40]!r}")
        value = value.strip()
        old = headers.get(key)
        headers[key] = value if old is None else f"{old}, {value}"
    return headers, status, description


class Parser:
    """An incremental parser of the bytes a server sends.

    Feed it whatever the socket returned; it keeps a partial frame (a control
    line without its CRLF, or a message whose payload has not all arrived) for
    the next call.
    """

    __slots__ = ("_buf", "_pending")

    def __init__(self) -> None:
        self._buf = bytearray()
        # (subject, sid, reply, header size or -1, total size) of a message
        # whose control line is parsed and whose payload is awaited
        self._pending: tuple[str, int, str | None, int, int] | None = None

    def parse(self, data: bytes) -> list[Op]:
        """Parse ``data`` after what was fed before; return the complete operations.

        Raises:
            ProtocolError: the bytes are not the NATS protocol. The parser is
                unusable afterwards.
        """
        buf = self._buf
        buf += data
        ops: list[Op] = []
        pos = 0
        n = len(buf)
        pending = self._pending
        find = buf.find
        # Payloads are copied once, out of a view (a bytearray slice would be
        # copied twice on its way to bytes); the view is released before the
        # consumed bytes are deleted.
        view = memoryview(buf)
        try:
            while pos < n:
                if pending is not None:
                    subject, sid, reply, hsize, size = pending
                    end = pos + size
                    if end + 2 > n:
                        break
                    if buf[end] != 13 or buf[end + 1] != 10:  # CR LF
                        raise ProtocolError("message payload not followed by CRLF")
                    if hsize < 0:
                        ops.append(Msg(subject, sid, reply, view[pos:end].tobytes()))
                    else:
                        headers, status, description = parse_headers(
                            view[pos : pos + hsize].tobytes()
                        )
                        ops.append(
                            Msg(
                                subject,
                                sid,
                                reply,
                                view[pos + hsize : end].tobytes(),
                                headers,
                                status,
                                description,
                            )
                        )
                    pos = end + 2
                    pending = None
                    continue
                i = find(_CRLF, pos)
                if i < 0:
                    if n - pos > MAX_CONTROL_LINE:
                        raise ProtocolError("control line too long")
                    break
                line = buf[pos:i]
                pos = i + 2
                if line[:4] == b"MSG ":
                    parts = line.split(b" ")
                    count = len(parts)
                    # The common forms inline (a call, a copy and a split
                    # saved per message): MSG <subject> <sid> <size>, and
                    # with a reply subject (a remote frame's number).
                    if count == 4 and parts[2].isdigit() and parts[3].isdigit():
                        pending = (
                            parts[1].decode(),
                            int(parts[2]),
                            None,
                            -1,
                            int(parts[3]),
                        )
                    elif (
                        count == 5
                        and parts[1]
                        and parts[3]
                        and parts[2].isdigit()
                        and parts[4].isdigit()
                    ):
                        pending = (
                            parts[1].decode(),
                            int(parts[2]),
                            parts[3].decode(),
                            -1,
                            int(parts[4]),
                        )
                    else:
                        pending = _msg_line(bytes(line))
                elif line[:5] == b"HMSG ":
                    pending = _hmsg_line(bytes(line))
                else:
                    ops.append(_control_line(bytes(line)))
        except UnicodeDecodeError:
            raise ProtocolError("a subject is not UTF-8") from None
        finally:
            view.release()
        self._pending = pending
        del buf[:pos]
        return ops


def _msg_line(line: bytes) -> tuple[str, int, str | None, int, int]:
    parts = line.split()
    try:
        if len(parts) == 4:
            return parts[1].decode(), _size(parts[2]), None, -1, _size(parts[3])
        if len(parts) == 5:
            return (
                parts[1].decode(),
                _size(parts[2]),
                parts[3].decode(),
                -1,
                _size(parts[4]),
            )
    except ValueError:
        pass
    raise ProtocolError(f"malformed MSG line: {line[:80]!r}")


def _hmsg_line(line: bytes) -> tuple[str, int, str | None, int, int]:
    parts = line.split()
    try:
        if len(parts) == 5:
            subject, sid, reply = parts[1].decode(), _size(parts[2]), None
            hsize, size = _size(parts[3]), _size(parts[4])
        elif len(parts) == 6:
            subject, sid = parts[1].decode(), _size(parts[2])
            reply = parts[3].decode()
            hsize, size = _size(parts[4]), _size(parts[5])
        else:
            raise ValueError
        if hsize > size:
            raise ValueError
    except ValueError:
        raise ProtocolError(f"malformed HMSG line: {line[:80]!r}") from None
    return subject, sid, reply, hsize, size


def _size(raw: bytes) -> int:
    if not raw.isdigit():  # no sign, no underscores, no spaces
        raise ValueError
    return int(raw)


def _control_line(line: bytes) -> Op:
    word, _, rest = line.strip().partition(b" ")
    word = word.upper()
    if word == b"PING":
        return PING
    if word == b"PONG":
        return PONG
    if word == b"+OK":
        return OK
    if word == b"-ERR":
        text = rest.strip().decode(errors="replace")
        if len(text) >= 2 and text[0] == text[-1] == "'":
            text = text[1:-1]
        return ErrLine(text)
    if word == b"INFO":
        try:
            info = json.loads(rest)
        except ValueError:
            raise ProtocolError(f"malformed INFO: {line[:80]!r}") from None
        if not isinstance(info, dict):
            raise ProtocolError(f"malformed INFO: {line[:80]!r}")
        return ServerInfo(info)
    raise ProtocolError(f"unknown protocol operation: {line[:80]!r}")
