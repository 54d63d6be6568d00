"""Public classes and functions report their public module, as anyio's and
trio's do: ``actors.AskTimeout`` in tracebacks and reprs, not
``actors._errors.AskTimeout``."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import sys
import traceback
import typing
from typing import Any

import pytest

import actors
from actors import Actor, ActorRef, AskTimeout, OneForOne

PACKAGES = [
    "actors",
    "actors.channel",
    "actors.mailbox",
    "actors.testing",
    "actors.remote",
    "actors.node",
]


def _public_objects() -> list[tuple[str, str, Any]]:
    found = []
    for package in PACKAGES:
        if package in ("actors.remote", "actors.node"):
            pytest.importorskip("msgspec")
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            ours = (getattr(value, "__module__", "") or "").startswith("actors")
            if ours and (inspect.isclass(value) or inspect.isfunction(value)):
                found.append((package, name, value))
    return found


def test_every_public_class_and_function_names_a_public_module() -> None:
    private = [
        f"{package}.{name}: {value.__module__}"
        for package, name, value in _public_objects()
        if any(part.startswith("_") for part in value.__module__.split("."))
    ]
    assert not private


def test_the_public_module_holds_the_object_under_its_name() -> None:
    # What pickle, documentation tools and "import from __module__" rely on.
    for _, _, value in _public_objects():
        home = sys.modules[value.__module__]
        assert getattr(home, value.__name__) is value, value


def test_a_traceback_names_the_public_exception() -> None:
    text = "".join(traceback.format_exception_only(AskTimeout("no reply")))
    assert text == "actors.AskTimeout: no reply\n"
    assert repr(ActorRef) == "<class 'actors.ActorRef'>"
    assert repr(ActorRef[int]) == "actors.ActorRef[int]"


@pytest.mark.parametrize(
    "error", [actors.AskTimeout("x"), actors.ActorStopped("y"), actors.MailboxFull()]
)
def test_public_exceptions_pickle_through_their_public_module(
    error: Exception,
) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and again.args == error.args


def test_type_hints_of_a_user_s_actor_still_resolve() -> None:
    # get_type_hints looks names up in the module __module__ names: the
    # runtime's own annotations were evaluated where they were written.
    class Counter(Actor):
        total: int = 0

    hints = typing.get_type_hints(Counter)
    assert hints["total"] is int
    assert "supervisor_strategy" in hints
    assert typing.get_type_hints(OneForOne)["max_restarts"] is int


def test_dataclasses_of_the_kit_keep_their_fields_types() -> None:
    from actors.testing import TimerStarted

    hints = typing.get_type_hints(TimerStarted)
    assert {field.name for field in dataclasses.fields(TimerStarted)} <= set(hints)


def test_the_wire_tags_of_the_runtime_s_classes_do_not_change() -> None:
    # The codec's tags are explicit names, never derived from __module__.
    pytest.importorskip("msgspec")
    from actors.remote import Remote, RemoteActorError

    codec = Remote("nats://127.0.0.1:4222", system="s", node="n").codec
    for cls, tag in [
        (actors.AskTimeout, "actors.AskTimeout"),
        (actors.ActorStopped, "actors.ActorStopped"),
        (actors.MailboxFull, "actors.MailboxFull"),
        (actors.StopReason, "actors.StopReason"),
        (RemoteActorError, "actors.remote.RemoteActorError"),
    ]:
        assert codec._by_type[cls].tag == tag
