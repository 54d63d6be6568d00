"""What a node hands the node processes it starts: how to connect, and the
cluster secret, never on their command lines.

``spawn_pool(processes=N)`` starts ``python -m actors.node`` children that
must join the same NATS server as their parent, with its credentials (user
and password, token, NKey seed, creds file, TLS files) and, when the parent
has one, its cluster secret. A command line is readable by every user of
the machine (``ps``), so none of that goes there: the parent writes a
[``Handoff``][actors.remote.scaleout._handoff.Handoff] as JSON into a pipe,
and the child inherits the pipe's reading end (``--options-fd N``) and reads
it to its end before anything else. Nothing is written to disk and nothing
is put in the environment (which children of the child would inherit).

The parent's node options go down too (``NODE_OPTIONS``: its share,
buffer capacity and window, heartbeat interval, peer-table bounds and
timeouts), so a pool's children bound and pace their peers as their parent
does.

What can be handed down: the options of ``actors.nats.connect`` whose
values are data (str, numbers, booleans, bytes, paths). A ``tls``
``ssl.SSLContext`` cannot be (no context can be read back into the files it
was made from): give ``tls_ca_file``, ``tls_cert_file`` and
``tls_key_file`` instead. An ``error_callback`` stays with the parent (the
children log their client's errors).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Handoff", "read_handoff"]

#: Client options whose values are paths (handed down absolute).
_PATHS = frozenset({"creds_file", "tls_ca_file", "tls_cert_file", "tls_key_file"})
#: Client options that stay with the parent.
_KEPT = frozenset({"error_callback", "name"})
#: The most bytes a handoff may take (it is read before the node starts).
MAX_HANDOFF = 1 << 20
#: The node options (``Remote``'s arguments) handed down: the bounds and
#: timings a child must share with its parent (the share above all).
NODE_OPTIONS = frozenset(
    {
        "capacity",
        "window",
        "share",
        "heartbeat_interval",
        "max_peers",
        "gone_ttl",
        "idle_timeout",
        "stop_timeout",
    }
)


@dataclass(frozen=True)
class Handoff:
    """How a node process connects: the servers, the NATS client's options,
    the cluster secret's keys (the first signs, all verify), and the node
    options (``Remote``'s arguments among ``NODE_OPTIONS``: numbers; the
    child's ``Remote`` checks their values).

    Raises:
        TypeError: a client option cannot be handed down (an
            ``ssl.SSLContext`` for ``tls``, a value that is not data), or a
            node option is not one of ``NODE_OPTIONS`` or not a number,
            naming it.
    """

    servers: Sequence[str]
    client_options: Mapping[str, Any] = field(default_factory=dict)
    secret: Sequence[bytes] = ()
    node_options: Mapping[str, int | float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key, number in self.node_options.items():
            if key not in NODE_OPTIONS:
                raise TypeError(
                    f"node option {key!r} cannot be handed to node processes "
                    f"(only {', '.join(sorted(NODE_OPTIONS))})"
                )
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise TypeError(
                    f"node option {key!r} must be a number, not {type(number).__name__}"
                )
        for key, value in self.client_options.items():
            if key in _KEPT:
                continue
            if key == "tls" and value is not None:
                raise TypeError(
                    "client_options['tls'] (an ssl.SSLContext) cannot be handed "
                    "to node processes: give tls_ca_file, tls_cert_file and "
                    "tls_key_file (paths) instead"
                )
            _encode_option(key, value)  # raises for what is not data

    def to_json(self) -> bytes:
        """The handoff as JSON (bytes as base64, paths absolute)."""
        options = {
            key: _encode_option(key, value)
            for key, value in self.client_options.items()
            if key not in _KEPT and not (key == "tls" and value is None)
        }
        return json.dumps(
            {
                "servers": list(self.servers),
                "client_options": options,
                "secret": [base64.b64encode(key).decode() for key in self.secret],
                "node_options": dict(self.node_options),
            }
        ).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Handoff:
        """A handoff from ``to_json``'s bytes.

        Raises:
            ValueError: ``data`` is not a handoff.
        """
        try:
            raw = json.loads(data)
            servers = raw["servers"]
            options = raw["client_options"]
            secret = [base64.b64decode(key, validate=True) for key in raw["secret"]]
            node_options = raw.get("node_options", {})
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a node handoff: {exc}") from None
        if not (
            isinstance(servers, list)
            and servers
            and all(isinstance(url, str) for url in servers)
            and isinstance(options, dict)
        ):
            raise ValueError("not a node handoff: servers or client_options")
        if not isinstance(node_options, dict):
            raise ValueError("not a node handoff: node_options")
        decoded = {key: _decode_option(key, value) for key, value in options.items()}
        try:
            return cls(servers, decoded, secret, node_options)
        except TypeError as exc:
            raise ValueError(f"not a node handoff: {exc}") from None


def _encode_option(key: str, value: object) -> object:
    if key in _PATHS and isinstance(value, str | os.PathLike):
        return os.path.abspath(os.fspath(value))
    if key == "nkey_seed" and isinstance(value, bytes | bytearray):
        return {"bytes": base64.b64encode(bytes(value)).decode()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(
        f"client_options[{key!r}] ({type(value).__name__}) cannot be handed to "
        "node processes: only str, numbers, booleans, bytes and paths can"
    )


def _decode_option(key: str, value: object) -> object:
    if isinstance(value, dict):
        data = value.get("bytes")
        if key != "nkey_seed" or not isinstance(data, str):
            raise ValueError(f"not a node handoff: client option {key!r}")
        return base64.b64decode(data)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ValueError(f"not a node handoff: client option {key!r}")


def read_handoff(fd: int) -> Handoff:
    """Read a handoff from the inherited file descriptor ``fd`` to its end,
    and close it.

    Raises:
        OSError: ``fd`` cannot be read.
        ValueError: what it holds is not a handoff, or is over 1 MiB.
    """
    chunks: list[bytes] = []
    size = 0
    with os.fdopen(fd, "rb", closefd=True) as pipe:
        while chunk := pipe.read(65536):
            size += len(chunk)
            if size > MAX_HANDOFF:
                raise ValueError(f"the node handoff is over {MAX_HANDOFF} bytes")
            chunks.append(chunk)
    return Handoff.from_json(b"".join(chunks))
