"""Remote spawn: the messages between a spawner and a node's agent, the
arguments as tagged values, and ``system.remote.spawn``.

A node that hosts actors for others runs an agent actor registered under the
name ``AGENT_NAME`` (``python -m actors.node`` does). A spawner asks it
``SpawnRequest`` (a class by its path ``"pkg.mod:Name"``, the arguments as
tagged values) and gets ``SpawnReply`` (the new actor's ref) or the error;
what the node may construct is fixed by ``_hosting``.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ... import Actor, ActorNotFound, ActorRef
from .._codec import Codec
from .._errors import SpawnError
from .._node import NodeAddress
from ._hosting import module_name_of, register_module_types, target_of
from ._node import Node

__all__ = [
    "AGENT_NAME",
    "MAX_REMOTE_CAPACITY",
    "MAX_REMOTE_DRAIN",
    "SpawnReply",
    "SpawnRequest",
    "Unspawn",
    "check_remote_request",
    "check_spawn_options",
    "decode_args",
    "encode_args",
    "register_protocol",
    "remote_spawn",
]

#: The name a node's agent is registered under (``system.remote.register``).
AGENT_NAME = "actors.node"

#: The largest mailbox capacity a remote spawner may ask for: a node keeps
#: a peer's backlog bounded (2**62 from the network would be unbounded).
MAX_REMOTE_CAPACITY = 1 << 20
#: The largest ``drain`` a remote spawner may ask for.
MAX_REMOTE_DRAIN = 1 << 16
#: The most characters of a name, a class path or a token from the network.
_MAX_TEXT = 256

#: The tag of an argument that is an actor ref (its body: a one-element list
#: holding the ref, decoded as a plain list so the codec resolves the ref).
_REF_TAG = "actors.ref"

#: A value of a registered class as (tag, encoded body); the body is inlined.
Tagged = tuple[str, msgspec.Raw]


class SpawnRequest(msgspec.Struct, frozen=True, array_like=True):
    """To a node's agent: spawn ``target`` as its child."""

    target: str
    args: list[Tagged]
    kwargs: dict[str, Tagged]
    name: str | None = None
    capacity: int | None = None
    drain: int | None = None
    restart: str = "transient"
    #: Names this request for an ``Unspawn`` (None: cannot be undone).
    token: str | None = None


class Unspawn(msgspec.Struct, frozen=True, array_like=True):
    """To a node's agent: stop the actor the ``SpawnRequest`` with ``token``
    made, if it made one; sent when the spawner gave up on the answer
    (cancelled, timed out). It comes after its SpawnRequest (FIFO per pair)."""

    token: str


class SpawnReply(msgspec.Struct, frozen=True, array_like=True):
    """The agent's answer to ``SpawnRequest``: the new actor's ref."""

    ref: ActorRef[Any]


def register_protocol(codec: Codec, *classes: type) -> None:
    """Register the spawn messages (and ``classes``) on ``codec`` under
    stable tags ``actors.remote.<Name>`` (idempotent)."""
    for cls in (SpawnRequest, SpawnReply, SpawnError, Unspawn, *classes):
        if not codec.is_registered(cls):
            codec.register(cls, f"actors.remote.{cls.__name__}")


# -- arguments ---------------------------------------------------------------


def encode_value(codec: Codec, value: object) -> Tagged:
    """``value`` as a tagged value (a ref as ``_REF_TAG``).

    Raises:
        TypeError: its type is not registered, or it cannot be encoded.
    """
    if isinstance(value, ActorRef):
        return _REF_TAG, msgspec.Raw(codec.encoder.encode([value]))
    tag, body = codec.encode(value)
    return tag, msgspec.Raw(body)


def decode_value(codec: Codec, tagged: Tagged) -> Any:
    """The value of a tagged value from ``encode_value``.

    Raises:
        DecodeError: an unknown tag or a malformed body.
    """
    tag, body = tagged
    if tag == _REF_TAG:
        (ref,) = codec.decode("list", body)
        return ref
    return codec.decode(tag, body)


def encode_args(
    codec: Codec, args: Iterable[object], kwargs: Mapping[str, object]
) -> tuple[list[Tagged], dict[str, Tagged]]:
    """Positional and keyword arguments as tagged values.

    Raises:
        TypeError: an argument cannot be encoded (its type is named).
    """
    return (
        [encode_value(codec, arg) for arg in args],
        {key: encode_value(codec, value) for key, value in kwargs.items()},
    )


def decode_args(
    codec: Codec, args: list[Tagged], kwargs: dict[str, Tagged]
) -> tuple[list[Any], dict[str, Any]]:
    """The arguments ``encode_args`` encoded.

    Raises:
        DecodeError: one of them cannot be decoded.
    """
    return (
        [decode_value(codec, arg) for arg in args],
        {key: decode_value(codec, value) for key, value in kwargs.items()},
    )


# -- the spawner's side ----------------------------------------------------------


async def remote_spawn(
    remote: Node,
    node: str | NodeAddress,
    factory: type[Actor] | str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    name: str | None,
    capacity: int | None,
    drain: int | None,
    restart: str,
    timeout: float,
) -> ActorRef[Any]:
    """See [``Remote.spawn``][actors.remote.Remote.spawn]."""
    target, module = target_of(factory)
    codec = remote.codec
    register_protocol(codec)
    if module is not None:
        register_module_types(codec, module, module_name_of(module))
    encoded_args, encoded_kwargs = encode_args(codec, args, kwargs)
    token = secrets.token_hex(8)
    request = SpawnRequest(
        target, encoded_args, encoded_kwargs, name, capacity, drain, restart, token
    )
    try:
        agent = await remote.lookup(node, AGENT_NAME, timeout=timeout)
    except ActorNotFound:
        raise ActorNotFound(
            f"node {node} runs no node agent (start it with python -m actors.node)"
        ) from None
    try:
        answer = await agent.ask(request, timeout=timeout)
    except BaseException:
        # Cancelled or timed out: the node may spawn it all the same, and
        # nobody would have its ref. Undo it (a tell: never waits).
        with contextlib.suppress(Exception):
            agent.tell(Unspawn(token))
        raise
    if isinstance(answer, BaseException):
        raise answer
    if type(answer) is not SpawnReply:
        raise SpawnError(f"node {node} answered a spawn with {answer!r:.200}")
    return answer.ref


def check_spawn_options(
    name: str | None,
    capacity: int | None,
    drain: int | None,
    restart: str,
) -> None:
    """Check the options of a remote spawn at the spawner.

    Raises:
        TypeError / ValueError: a bad option, naming it.
    """
    if name is not None and type(name) is not str:
        raise TypeError(f"name must be a str or None, not {type(name).__name__}")
    if name is not None and len(name) > _MAX_TEXT:
        raise ValueError(f"name must be at most {_MAX_TEXT} characters")
    for option, value, most in (
        ("capacity", capacity, MAX_REMOTE_CAPACITY),
        ("drain", drain, MAX_REMOTE_DRAIN),
    ):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{option} must be an int or None, not {value!r}")
        if not 1 <= value <= most:
            raise ValueError(
                f"{option} of a remote spawn must be 1 to {most}, not {value}"
            )
    if restart not in ("transient", "permanent", "temporary"):
        raise ValueError(
            f"restart must be 'transient', 'permanent' or 'temporary', not {restart!r}"
        )


def check_remote_request(request: SpawnRequest) -> None:
    """Check a ``SpawnRequest`` that came from the network, at the node:
    every option within the bounds ``check_spawn_options`` sets at the
    spawner (a capacity of 2**62 is refused, not taken as unbounded).

    Raises:
        SpawnError: an option out of its bounds, naming it.
    """
    for option, text in (("target", request.target), ("token", request.token)):
        if text is not None and len(text) > _MAX_TEXT:
            raise SpawnError(
                f"{option} of a remote spawn is over {_MAX_TEXT} characters"
            )
    try:
        check_spawn_options(
            request.name, request.capacity, request.drain, request.restart
        )
    except (TypeError, ValueError) as exc:
        raise SpawnError(f"{request.target}: {exc}") from None
