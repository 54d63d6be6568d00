"""Node identity: a node's name, its incarnation, and the addresses of actors.

A node is one actor system taking part in the remote layer. It has a name,
chosen by its user and stable across restarts, and an incarnation id drawn at
random each time the system starts: a restarted process is a new incarnation,
so a ref to the old one never reaches the new one by accident (its subject is
another one, see ``_wire``).
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated

import msgspec

__all__ = [
    "INCARNATION_PATTERN",
    "TOKEN_PATTERN",
    "NodeAddress",
    "RefAddress",
    "check_token",
    "new_incarnation",
]

#: A node or system name: one NATS subject token, safe in every position (no
#: dots, wildcards or whitespace), at most 64 characters.
TOKEN_PATTERN = r"\A[A-Za-z0-9_-]{1,64}\Z"
#: An incarnation id: 16 lowercase hex digits (64 random bits). (``\Z``, not
#: ``$``, which would let a trailing newline into a subject.)
INCARNATION_PATTERN = r"\A[0-9a-f]{16}\Z"

_token = re.compile(TOKEN_PATTERN).match

Token = Annotated[str, msgspec.Meta(pattern=TOKEN_PATTERN)]
Incarnation = Annotated[str, msgspec.Meta(pattern=INCARNATION_PATTERN)]
#: An actor path: ``"/user/parent/child"``; bounded so a frame cannot make a
#: node keep huge keys.
Path = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


def check_token(name: str, value: object) -> str:
    """Check that ``value`` is a valid node or system name and return it.

    Raises:
        TypeError: ``value`` is not a ``str``.
        ValueError: it is empty, longer than 64 characters, or has a character
            other than ASCII letters, digits, ``-`` and ``_``.
    """
    if type(value) is not str:
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if not _token(value):
        raise ValueError(
            f"{name} must be 1 to 64 ASCII letters, digits, '-' or '_' "
            f"(one NATS subject token), not {value!r}"
        )
    return value


def new_incarnation() -> str:
    """A fresh random incarnation id (16 hex digits, 64 bits from ``secrets``)."""
    return secrets.token_hex(8)


class NodeAddress(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One incarnation of a node; on the wire ``[node, incarnation]``.

    Equal addresses name the same running process: a restarted node has the
    same ``node`` and another ``incarnation``.

    Attributes:
        node: the node's name (a subject token, see ``check_token``).
        incarnation: its incarnation id (16 hex digits).
    """

    node: Token
    incarnation: Incarnation

    @classmethod
    def new(cls, node: str) -> NodeAddress:
        """A new incarnation of the node named ``node``.

        Raises:
            TypeError / ValueError: ``node`` is not a valid name.
        """
        return cls(check_token("node", node), new_incarnation())

    def __str__(self) -> str:
        return f"{self.node}#{self.incarnation}"


class RefAddress(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """Where an actor lives: its node incarnation and its path; on the wire
    ``[node, incarnation, path]``. A ref inside a message travels as this.

    Attributes:
        node: the node's name.
        incarnation: the node's incarnation id.
        path: the actor's path on that node, e.g. ``"/user/parent/child"``.
    """

    node: Token
    incarnation: Incarnation
    path: Path

    @property
    def node_address(self) -> NodeAddress:
        """The node incarnation the actor lives on."""
        return NodeAddress(self.node, self.incarnation)

    def __str__(self) -> str:
        return f"{self.node}#{self.incarnation}{self.path}"
