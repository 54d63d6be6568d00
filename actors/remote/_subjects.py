"""Subject names: a node incarnation's inbox, its name subject, and the
return subjects that name a peer (see docs/remote-wire-format.md)."""

from __future__ import annotations

import re
from typing import Final

import msgspec

from ._node import NodeAddress, check_token

__all__ = ["DEFAULT_PREFIX", "Subjects", "frame_number"]

#: The default first subject token(s).
DEFAULT_PREFIX: Final = "actors"

_prefix = re.compile(r"[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64})*").fullmatch


class Subjects:
    """The subjects of one node incarnation and of its peers.

    * ``inbox``: ``<prefix>.<system>.<node>.<incarnation>``, where peers send
      this incarnation's frames. A restarted node has another incarnation and
      so another inbox: frames for the old one never reach it, and NATS
      answers "no responders" for them.
    * ``name``: ``<prefix>.<system>.<node>``, subscribed with the queue group
      ``<node>``, so it reaches exactly one live incarnation of the node: for
      lookups and for programs that know the node's name only.
    * ``returns``: ``<inbox>.nr.>``; a frame to a peer is published with the
      reply subject ``<inbox>.nr.<peer node>.<peer incarnation>``, so NATS's
      no-responders status for it comes back here naming the peer.
    * ``requests``: ``<inbox>.rq``, the NATS client's ``inbox_prefix``: the
      replies to this node's own requests (lookups) come to
      ``<inbox>.rq.<nuid>.<n>``, so every subject a node uses, to publish
      or to subscribe, is under ``<prefix>.<system>.>`` and a NATS user
      whose permissions are scoped to it is enough (see the Security
      section of docs/remote.md).

    Args:
        system: the actor system's name (one subject token).
        node: this node's address.
        prefix: the first token(s), dot-separated.

    Raises:
        TypeError / ValueError: a bad ``system`` or ``prefix``, naming it.
    """

    __slots__ = (
        "_base",
        "inbox",
        "name",
        "node",
        "queue",
        "requests",
        "return_prefix",
        "returns",
    )

    def __init__(
        self, system: str, node: NodeAddress, *, prefix: str = DEFAULT_PREFIX
    ) -> None:
        check_token("system", system)
        if type(prefix) is not str:
            raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
        if not _prefix(prefix):
            raise ValueError(
                "prefix must be dot-separated subject tokens of ASCII letters, "
                f"digits, '-' or '_', not {prefix!r}"
            )
        self._base = f"{prefix}.{system}."
        self.node = node
        self.inbox = self.inbox_of(node)
        self.name = self.name_of(node.node)
        self.queue = node.node
        self.return_prefix = self.inbox + ".nr."
        self.returns = self.return_prefix + ">"
        self.requests = self.inbox + ".rq"

    def inbox_of(self, peer: NodeAddress) -> str:
        """The inbox subject of the node incarnation ``peer``."""
        return f"{self._base}{peer.node}.{peer.incarnation}"

    def name_of(self, node: str) -> str:
        """The name subject of the node named ``node`` (any incarnation).

        Raises:
            TypeError / ValueError: ``node`` is not a valid node name.
        """
        return self._base + check_token("node", node)

    def return_for(self, peer: NodeAddress) -> str:
        """The reply subject for frames to ``peer`` (see ``returns``)."""
        return f"{self.return_prefix}{peer.node}.{peer.incarnation}"

    def peer_of_return(self, subject: str) -> NodeAddress | None:
        """The peer named by a subject under ``returns``, or ``None`` if it is
        not one."""
        returned = self.returned_frame(subject)
        return None if returned is None else returned[0]

    def returned_frame(self, subject: str) -> tuple[NodeAddress, int | None] | None:
        """The peer named by a subject under ``returns`` and the number of
        the frame returned (None for an unnumbered one), or ``None`` if it
        is not such a subject."""
        if not subject.startswith(self.return_prefix):
            return None
        node, _, rest = subject[len(self.return_prefix) :].partition(".")
        incarnation, _, number = rest.partition(".")
        seq = frame_number(number) if number else None
        if number and seq is None:
            return None
        try:
            return msgspec.convert([node, incarnation], NodeAddress), seq
        except msgspec.ValidationError:
            return None


def frame_number(token: str) -> int | None:
    """The frame number in a reply subject's last token, or None."""
    if not token.isascii() or not token.isdigit() or len(token) > 18:
        return None
    return int(token)
