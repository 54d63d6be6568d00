"""The codec: registered types by tag and version, adapters for old
versions, clear errors."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec
import pytest

from actors.persistence import Codec, DecodeFailed, EventsRejected


@dataclass
class Moved:
    x: int
    y: int = 0


class Point(msgspec.Struct):
    x: int
    y: int


class Color(enum.Enum):
    RED = "red"


class Pair(NamedTuple):
    a: int
    b: str


class Custom:
    pass


@dataclass
class HoldsCustom:
    inner: list[Custom] = field(default_factory=list)


def test_registered_values_go_through_with_their_manifest() -> None:
    codec = Codec(Moved, Point, Color, Pair, int)
    for value in (Moved(1, 2), Point(3, 4), Color.RED, Pair(1, "b"), 7):
        manifest, payload = codec.encode(value)
        assert manifest == f"{type(value).__name__}@1"
        assert codec.decode(manifest, payload) == value


def test_a_tag_and_a_version_can_be_given() -> None:
    codec = Codec()
    codec.register(Moved, tag="moved", version=3)
    assert codec.encode(Moved(1))[0] == "moved@3"
    assert codec.types == {Moved: "moved@3"}
    assert codec.manifest_of(Moved) == "moved@3" and codec.manifest_of(int) is None


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda c: c.register(Moved), ValueError, "registered already"),
        (lambda c: c.register(Point, tag="Moved"), ValueError, "taken"),
        (lambda c: c.register(Point, tag="a@b"), ValueError, "without '@'"),
        (lambda c: c.register(Point, tag=""), ValueError, "non-empty"),
        (lambda c: c.register(Point, version=0), ValueError, ">= 1"),
        (lambda c: c.register(Point, version="2"), TypeError, "int"),
        (lambda c: c.register(Custom), TypeError, "cannot encode Custom"),
        (lambda c: c.register(HoldsCustom), TypeError, "cannot encode Custom"),
        (lambda c: c.register(Moved(1)), TypeError, "a class"),
    ],
)
def test_a_bad_registration_is_refused(call: Any, error: type, match: str) -> None:
    codec = Codec(Moved)
    with pytest.raises(error, match=match):
        call(codec)


def test_an_unregistered_or_unencodable_value_is_rejected() -> None:
    codec = Codec(Moved)
    with pytest.raises(EventsRejected, match="Point is not registered"):
        codec.encode(Point(1, 2))
    with pytest.raises(EventsRejected, match="cannot encode Moved"):
        codec.encode(Moved(2**80))


def test_an_unknown_manifest_or_bad_bytes_fail_to_decode() -> None:
    codec = Codec(Moved)
    with pytest.raises(DecodeFailed, match="no registered type"):
        codec.decode("Gone@1", b"\x80")
    with pytest.raises(DecodeFailed, match="no registered type"):
        codec.decode("Moved", b"\x80")
    with pytest.raises(DecodeFailed, match="does not decode"):
        codec.decode("Moved@1", b"\xc1")
    with pytest.raises(DecodeFailed, match="newer than the registered version"):
        codec.decode("Moved@2", codec.encode(Moved(1))[1])


@dataclass
class Renamed:
    """Version 3: ``x`` became ``left``, and ``unit`` was added (no default)."""

    left: int
    unit: str


def test_adapters_upgrade_old_versions_step_by_step() -> None:
    old = msgspec.msgpack.encode({"x": 5})  # version 1: only x
    v2 = msgspec.msgpack.encode({"left": 6})  # version 2: x renamed
    codec = Codec()
    codec.register(Renamed, tag="moved", version=3)

    @codec.adapter("moved", version=1)
    def rename(plain: dict[str, Any]) -> dict[str, Any]:
        return {"left": plain["x"]}

    codec.add_adapter("moved", 2, lambda plain: {**plain, "unit": "m"})
    assert rename.__name__ == "rename"  # the decorator returns the function
    assert codec.decode("moved@1", old) == Renamed(5, "m")
    assert codec.decode("moved@2", v2) == Renamed(6, "m")


def test_a_version_without_an_adapter_is_converted_as_it_is() -> None:
    codec = Codec()
    codec.register(Moved, version=2)  # y was added with a default
    assert codec.decode("Moved@1", msgspec.msgpack.encode({"x": 1})) == Moved(1, 0)


def test_an_old_version_that_does_not_convert_names_the_missing_adapter() -> None:
    codec = Codec()
    codec.register(Renamed, version=2)
    with pytest.raises(DecodeFailed, match="adapter of an older version"):
        codec.decode("Renamed@1", msgspec.msgpack.encode({"x": 1}))


def test_a_failing_adapter_fails_the_decode_with_its_error() -> None:
    codec = Codec()
    codec.register(Moved, version=2)
    codec.add_adapter("Moved", 1, lambda plain: plain["missing"])
    with pytest.raises(DecodeFailed, match="KeyError") as caught:
        codec.decode("Moved@1", msgspec.msgpack.encode({"x": 1}))
    assert isinstance(caught.value.__cause__, KeyError)


@pytest.mark.parametrize(
    ("tag", "version", "function", "error"),
    [
        ("Nope", 1, lambda p: p, ValueError),
        ("Moved", 2, lambda p: p, ValueError),  # not below the registered 2
        ("Moved", 0, lambda p: p, ValueError),
        ("Moved", 1, "not callable", TypeError),
    ],
)
def test_a_bad_adapter_is_refused(
    tag: str, version: int, function: Any, error: type
) -> None:
    codec = Codec()
    codec.register(Moved, version=2)
    with pytest.raises(error):
        codec.add_adapter(tag, version, function)


def test_one_version_has_one_adapter() -> None:
    codec = Codec()
    codec.register(Moved, version=2)
    codec.add_adapter("Moved", 1, lambda p: p)
    with pytest.raises(ValueError, match="has an adapter already"):
        codec.add_adapter("Moved", 1, lambda p: p)


def test_the_package_exports_what_it_imports() -> None:
    import actors.persistence as package

    # (pytest rewrites the modules of its plugins: it adds "@py_..." names.)
    public = {name for name in vars(package) if not name.startswith(("_", "@"))}
    public -= {"testing"}  # the subpackage, once imported
    assert set(package.__all__) == public
