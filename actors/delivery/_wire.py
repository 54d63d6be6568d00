"""What a message becomes on its way to a consumer controller: the object
itself for a local target, its tag and body (the node's codec) for a
remote one; and back. One place decides, by the target ref's kind."""

from __future__ import annotations

import weakref
from typing import Any

import msgspec

from .. import ActorRef, ActorSystem
from ..remote import Remote, RemoteRef
from ._protocol import protocol_classes

#: The codecs the delivery messages are registered on.
_registered: weakref.WeakSet[Any] = weakref.WeakSet()

__all__ = [
    "codec_of",
    "decode_payload",
    "encode_payload",
    "is_remote",
    "named_on_same_node",
    "prepare",
    "register",
]


def is_remote(ref: ActorRef[Any]) -> bool:
    """Whether messages to ``ref`` cross the wire (an actor of another node)."""
    return isinstance(ref, RemoteRef)


def named_on_same_node(named: ActorRef[Any], answer: ActorRef[Any]) -> bool:
    """Whether ``answer`` (the ref a consumer's answer names itself by) may
    be the actor ``named`` reaches: ``named`` is a remote ref by a
    registered name (``remote.lookup(node, "shipping")``: its path is the
    name, not ``/user/...``) and ``answer`` is an actor of the same node
    incarnation, the one the lookup confirmed. A name is not a path, so the
    two never compare equal; the caller binds ``named`` to ``answer`` on
    the first answer that also carries its secret epoch."""
    return (
        isinstance(named, RemoteRef)
        and isinstance(answer, RemoteRef)
        and not named.address.path.startswith("/")
        and answer.address.path.startswith("/")
        and answer.node == named.node
    )


def codec_of(system: ActorSystem[Any]) -> Any:
    """The codec of ``system``'s node, with the delivery messages registered.

    Raises:
        RuntimeError: the system is not a node (no ``remote=Remote(...)``).
    """
    remote = system.remote
    if not isinstance(remote, Remote):
        raise RuntimeError(
            "a remote ref needs the system to be a node: "
            "ActorSystem(remote=Remote(...))"
        )
    register(remote)
    return remote.codec


def prepare(system: ActorSystem[Any]) -> None:
    """Register the delivery messages on ``system``'s node codec, if it is a
    node (before any arrives: an unknown tag would be dropped)."""
    remote = system.remote
    if isinstance(remote, Remote):
        register(remote)


def register(remote: Remote) -> None:
    """Register the delivery messages on ``remote``'s codec (idempotent),
    under ``actors.delivery.<Name>``; one set lookup once done."""
    codec = remote.codec
    if codec in _registered:
        return
    _registered.add(codec)
    for cls in protocol_classes():
        if not codec.is_registered(cls):
            codec.register(cls, f"actors.delivery.{cls.__name__}")


def encode_payload(
    system: ActorSystem[Any], message: object
) -> tuple[str, msgspec.Raw]:
    """``message`` as ``(tag, body)`` by the node's codec.

    Raises:
        TypeError: its type is not registered with the node's codec.
        RuntimeError: the system is not a node.
    """
    tag, body = codec_of(system).encode(message)
    return tag, msgspec.Raw(body)


def decode_payload(system: ActorSystem[Any], tag: str, body: msgspec.Raw) -> Any:
    """The message encoded as ``(tag, body)``.

    Raises:
        actors.remote.DecodeError: an unknown tag or a malformed body.
    """
    return codec_of(system).decode(tag, body)
