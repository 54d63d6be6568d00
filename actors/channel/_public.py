"""Public classes and functions report their public module.

``actors.AskTimeout``, not ``actors._errors.AskTimeout``: in tracebacks, in
``repr`` (``<class 'actors.ActorRef'>``), in pickles and in documentation
tools that read ``__module__``, as anyio and trio do. Each package's
``__init__`` calls ``publish`` after its imports. It lives in the channel
core, the lowest layer, so that every layer's package can use it.

Wire formats do not depend on it: the remote codec registers every class of
the runtime under an explicit tag (``"actors.AskTimeout"``), never one derived
from ``__module__``.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

__all__ = ["publish"]


def publish(namespace: dict[str, Any]) -> None:
    """Set ``__module__`` to the package's name on every class and function
    its ``__all__`` re-exports from a private module (a dotted name with a
    ``_``-prefixed part). An object made public by an earlier package (its
    ``__module__`` is public already) is left alone.

    A class's own string annotations (``from __future__ import annotations``)
    are evaluated first, in the module that defines them: afterwards
    ``typing.get_type_hints`` would look them up in the public package, which
    does not import every name they use (``ClassVar``, ``Mapping``...). An
    annotation that cannot be evaluated there either (a name imported only
    under ``TYPE_CHECKING``) stays a string, as unresolvable as before.
    """
    package = namespace["__name__"]
    for name in namespace["__all__"]:
        value = namespace[name]
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        module = getattr(value, "__module__", "") or ""
        if not module.startswith("actors") or not any(
            part.startswith("_") for part in module.split(".")
        ):
            continue
        if inspect.isclass(value):
            _resolve_own_annotations(value, module)
        value.__module__ = package


def _resolve_own_annotations(cls: type, module: str) -> None:
    own = inspect.get_annotations(cls)  # this class's own, a copy
    if not any(isinstance(hint, str) for hint in own.values()):
        return
    defining = vars(sys.modules[module])
    local = dict(vars(cls))
    for key, hint in own.items():
        if isinstance(hint, str):
            try:
                own[key] = eval(hint, defining, local)
            except Exception:
                continue  # unresolvable before as well: left as it was
    cls.__annotations__ = own
