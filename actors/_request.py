"""``Request[R]``: a message that expects a reply of type ``R``."""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Request"]

R = TypeVar("R", covariant=True)


class Request(Generic[R]):
    """Base class for messages asked with a reply of type ``R``.

    Subclass it (dataclasses welcome) so ``await ref.ask(Get())`` is typed as
    returning ``R``::

        @dataclass
        class Get(Request[int]):
            key: str

    It carries no state and adds no behaviour; plain objects can be asked too
    (their reply is typed ``Any``).
    """

    __slots__ = ()
