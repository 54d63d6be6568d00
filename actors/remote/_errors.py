"""The remote layer's errors, each raised in one documented situation."""

from __future__ import annotations

from .. import ActorNotFound
from ._node import NodeAddress

__all__ = [
    "ActorNotFound",
    "DecodeError",
    "FrameTooLarge",
    "NodeDown",
    "NodeUnreachable",
    "RemoteActorError",
    "SpawnError",
    "TrustedBrokerWarning",
]


class DecodeError(ValueError):
    """Bytes from the network could not be decoded: a malformed, truncated or
    oversize frame, an unknown envelope kind or wire version, an unknown type
    tag, or a body that does not fit its registered type.

    The only exception decoding raises (whatever the bytes); the caller counts
    it and drops what it could not decode. The underlying error, when there is
    one, is its ``__cause__``.
    """


class FrameTooLarge(ValueError):
    """An envelope is too large for one NATS message: with the frame's header
    it is over the server's ``max_payload``. Raised at the sender, by the call
    that tried to send it; nothing was sent."""


class NodeUnreachable(ConnectionError):
    """The remote node cannot be reached: NATS reports that nobody subscribes
    to its subject (it stopped, or a new incarnation replaced it), the failure
    detector declared it down, or its outbound buffer was closed."""


class RemoteActorError(Exception):
    """A remote handler raised an exception of a type the local codec does not
    know (or could not rebuild); this carries what could be transported.

    Args:
        type_name: the qualified name of the remote exception's type
            (``"module.QualName"``).
        message: ``str()`` of the remote exception.
        traceback_text: the remote traceback, formatted (may be cut short).

    Attributes:
        type_name, message, traceback_text: as given.
    """

    def __init__(self, type_name: str, message: str, traceback_text: str = "") -> None:
        super().__init__(type_name, message, traceback_text)
        self.type_name = type_name
        self.message = message
        self.traceback_text = traceback_text

    def __str__(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


class NodeDown(Exception):
    """A node was declared down by the failure detector (no heartbeat answer
    for too long).

    Reported by the heartbeat monitor, and the ``reason`` of the
    ``Terminated`` a watcher gets for each actor it watched on that node.

    Args:
        node: the node incarnation.
        phi: the failure detector's suspicion level when it was declared down.

    Attributes:
        node, phi: as given.
    """

    def __init__(self, node: NodeAddress, phi: float) -> None:
        super().__init__(node, phi)
        self.node = node
        self.phi = phi

    def __str__(self) -> str:
        return f"node {self.node} is down (phi {self.phi:.1f})"


class SpawnError(Exception):
    """A node refused a remote spawn: the class is not one it hosts (its
    module was not given to the node, it is not a public top-level
    ``Actor`` subclass of it), or the request was malformed."""


class TrustedBrokerWarning(UserWarning):
    """A node joined a broker it was given (``Remote(url, ...)``) without a
    cluster secret (the trusted-broker mode): any client that can publish on
    the system's subjects can act as a node.

    Issued with ``warnings.warn`` when such a node starts; the text is the
    same for every node, so under the default filter it is shown once per
    process (once per location, the ``warnings`` module's default). Filter
    it by category where the broker is trusted on purpose::

        warnings.filterwarnings("ignore", category=TrustedBrokerWarning)

    A node on its own embedded server (``Remote()`` without a URL) is its
    own trusted broker: it only logs the mode at INFO.
    """
