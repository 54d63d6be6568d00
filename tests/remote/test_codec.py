"""The codec: registered types round-trip, refs travel as addresses through the
caller's resolver, exceptions arrive as themselves or as RemoteActorError, and
bytes from the network only ever raise DecodeError."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.remote._codec import REF_EXT, Codec
from actors.remote._errors import DecodeError, RemoteActorError
from actors.remote._node import NodeAddress, RefAddress

NODE = NodeAddress("alpha", "0123456789abcdef")


class Point(msgspec.Struct):
    x: int
    y: int


@dataclasses.dataclass
class Greeting:
    text: str
    times: int = 1


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class FakeRef:
    """Stands in for the runtime's remote ref."""

    def __init__(self, address: RefAddress) -> None:
        self.address = address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeRef) and other.address == self.address

    def __hash__(self) -> int:
        return hash(self.address)


class Envelope(msgspec.Struct):
    reply_to: FakeRef
    payload: Any


@dataclasses.dataclass
class Order:
    item: str
    customer: FakeRef


class Boom(Exception):
    pass


class NeedsKeyword(Exception):
    def __init__(self, *, code: int) -> None:
        super().__init__(f"code {code}")


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


@dataclasses.dataclass(frozen=True)
class FrozenError(Exception):
    code: int


def ref_codec() -> Codec:
    def address_of(obj: object) -> RefAddress | None:
        return obj.address if isinstance(obj, FakeRef) else None

    codec = Codec(address_of=address_of, resolve=FakeRef)
    for cls in (Point, Greeting, Color, Level, Envelope, Order, Boom):
        codec.register(cls)
    return codec


def round_trip(codec: Codec, value: object) -> Any:
    tag, body = codec.encode(value)
    return codec.decode(tag, body)


# -- registration ----------------------------------------------------------------


def test_the_default_tag_is_the_qualified_name_and_an_explicit_one_wins() -> None:
    codec = Codec()
    codec.register(Point)
    codec.register(Greeting, "greeting.v1")
    assert codec.tag_of(Point) == f"{__name__}.Point"
    assert codec.tag_of(Greeting) == "greeting.v1"
    assert codec.encode(Greeting("hi"))[0] == "greeting.v1"


def test_registering_a_class_again_with_its_tag_is_a_no_op() -> None:
    codec = Codec()
    assert codec.register(Point, "p") is Point
    assert codec.register(Point, "p") is Point


def test_a_tag_or_class_registered_twice_differently_is_a_value_error() -> None:
    codec = Codec()
    codec.register(Point, "p")
    with pytest.raises(ValueError, match="registered already with tag 'p'"):
        codec.register(Point, "q")
    with pytest.raises(ValueError, match="tag 'p' is registered already for Point"):
        codec.register(Greeting, "p")


def test_bad_registration_arguments_name_themselves() -> None:
    codec = Codec()
    with pytest.raises(TypeError, match="cls must be a class"):
        codec.register(Point(1, 2))  # type: ignore[type-var]
    with pytest.raises(TypeError, match="tag must be a str"):
        codec.register(Point, 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tag must not be empty"):
        codec.register(Point, "")
    with pytest.raises(TypeError, match="max_traceback"):
        Codec(max_traceback=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="resolve must be callable"):
        Codec(resolve=3)  # type: ignore[arg-type]


def test_a_message_of_an_unregistered_type_is_a_type_error_naming_it() -> None:
    codec = Codec()
    with pytest.raises(TypeError, match=r"test_codec\.Point.*not registered"):
        codec.encode(Point(1, 2))


def test_a_subclass_of_a_registered_class_is_not_registered() -> None:
    codec = Codec()
    codec.register(Boom)

    class Louder(Boom):
        pass

    assert not codec.is_registered(Louder)
    with pytest.raises(TypeError, match="Louder"):
        codec.encode(Louder())


def test_an_unencodable_value_inside_a_message_is_a_type_error_naming_both() -> None:
    codec = Codec()
    codec.register(Greeting)
    with pytest.raises(TypeError, match=r"message of type .*Greeting.*object"):
        codec.encode(Greeting(object(), 1))  # type: ignore[arg-type]


# -- round trips -------------------------------------------------------------------


primitives = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=20,
)


@given(primitives)
def test_primitives_round_trip(value: object) -> None:
    assert round_trip(Codec(), value) == value


@given(st.tuples(st.integers(-(2**63), 2**63 - 1), st.text()))
def test_a_tuple_stays_a_tuple(value: tuple[int, str]) -> None:
    result = round_trip(Codec(), value)
    assert type(result) is tuple and result == value


@given(
    st.builds(Point, st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
    | st.builds(Greeting, st.text(), st.integers(0, 1000))
    | st.sampled_from(Color)
    | st.sampled_from(Level)
)
def test_registered_structs_dataclasses_and_enums_round_trip(value: object) -> None:
    result = round_trip(ref_codec(), value)
    assert type(result) is type(value) and result == value


def test_an_int_msgpack_cannot_hold_is_a_type_error_at_the_call() -> None:
    with pytest.raises(TypeError, match="cannot encode a message of type int"):
        Codec().encode(2**64)


def test_bool_and_none_keep_their_types() -> None:
    codec = Codec()
    assert round_trip(codec, True) is True
    assert round_trip(codec, None) is None
    assert type(round_trip(codec, 1)) is int


# -- refs --------------------------------------------------------------------------


def test_a_ref_in_a_typed_field_is_decoded_through_the_resolver() -> None:
    codec = ref_codec()
    ref = FakeRef(RefAddress("alpha", NODE.incarnation, "/user/asker"))
    result = round_trip(codec, Envelope(ref, [ref, {"k": ref}]))
    assert result == Envelope(ref, [ref, {"k": ref}])
    assert round_trip(codec, Order("tea", ref)) == Order("tea", ref)


def test_a_ref_travels_as_a_msgpack_extension_holding_its_address() -> None:
    codec = ref_codec()
    address = RefAddress("alpha", NODE.incarnation, "/user/a")
    _, body = codec.encode([FakeRef(address)])
    (ext,) = msgspec.msgpack.decode(body)
    assert isinstance(ext, msgspec.msgpack.Ext) and ext.code == REF_EXT
    assert msgspec.msgpack.decode(ext.data) == ["alpha", NODE.incarnation, "/user/a"]


def test_without_a_resolver_a_ref_decodes_as_its_address() -> None:
    sender = ref_codec()
    address = RefAddress("alpha", NODE.incarnation, "/user/a")
    tag, body = sender.encode([FakeRef(address)])
    assert Codec().decode(tag, body) == [address]


def test_a_ref_address_with_an_invalid_node_name_is_a_decode_error() -> None:
    codec = ref_codec()
    bad = msgspec.msgpack.Ext(
        REF_EXT, msgspec.msgpack.encode(["no.dots", NODE.incarnation, "/user/a"])
    )
    with pytest.raises(DecodeError):
        codec.decode("list", msgspec.msgpack.encode([bad]))


def test_a_resolver_that_raises_makes_a_decode_error() -> None:
    def resolve(address: RefAddress) -> object:
        raise LookupError("nope")

    sender = ref_codec()
    tag, body = sender.encode([FakeRef(RefAddress("a", NODE.incarnation, "/p"))])
    with pytest.raises(DecodeError) as info:
        Codec(resolve=resolve).decode(tag, body)
    assert isinstance(info.value.__cause__, LookupError)


def test_a_ref_field_that_receives_something_else_is_a_decode_error() -> None:
    codec = ref_codec()
    body = msgspec.msgpack.encode({"reply_to": "not a ref", "payload": 1})
    with pytest.raises(DecodeError):
        codec.decode(codec.tag_of(Envelope), body)


# -- exceptions --------------------------------------------------------------------


def raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def test_a_registered_exception_arrives_as_itself_with_the_remote_traceback_note() -> (
    None
):
    codec = ref_codec()
    tag, body = codec.encode_error(raised(Boom("bad", 7)))
    result = codec.decode(tag, body)
    assert type(result) is Boom and result.args == ("bad", 7)
    (note,) = result.__notes__
    assert note.startswith("remote traceback:\n") and "raise exc" in note


def test_standard_exceptions_are_known_without_registration() -> None:
    codec = Codec()
    for exc in (ValueError("v"), KeyError("k"), ZeroDivisionError("z")):
        result = codec.decode(*codec.encode_error(exc))
        assert type(result) is type(exc) and result.args == exc.args


def test_an_unregistered_exception_arrives_as_remote_actor_error() -> None:
    codec = Codec()
    tag, body = codec.encode_error(raised(Boom("bad")))
    result = codec.decode(tag, body)
    assert type(result) is RemoteActorError
    assert result.type_name == f"{__name__}.Boom"
    assert result.message == "bad"
    assert "Boom: bad" in result.traceback_text
    assert str(result) == f"{__name__}.Boom: bad"


def test_an_exception_that_cannot_be_rebuilt_arrives_as_remote_actor_error() -> None:
    codec = Codec()
    codec.register(NeedsKeyword)
    result = codec.decode(*codec.encode_error(NeedsKeyword(code=3)))
    assert type(result) is RemoteActorError
    assert result.type_name == f"{__name__}.NeedsKeyword"
    assert "could not be rebuilt" in result.message


def test_an_exception_with_unencodable_args_arrives_as_remote_actor_error() -> None:
    codec = ref_codec()
    result = codec.decode(*codec.encode_error(Boom(object())))
    assert type(result) is RemoteActorError and result.type_name.endswith("Boom")


def test_an_exception_whose_str_raises_still_travels() -> None:
    codec = Codec()
    result = codec.decode(*codec.encode_error(BadStr()))
    assert type(result) is RemoteActorError
    assert "str() of BadStr failed" in result.message


def test_a_frozen_exception_is_never_mutated_and_still_travels() -> None:
    codec = Codec()
    codec.register(FrozenError)
    original = FrozenError(5)
    result = codec.decode(*codec.encode_error(original))
    assert not getattr(original, "__notes__", None)
    assert isinstance(result, FrozenError | RemoteActorError)


def test_a_remote_actor_error_is_relayed_unchanged() -> None:
    codec = Codec()
    error = RemoteActorError("x.Y", "msg", "tb text")
    result = codec.decode(*codec.encode_error(error))
    assert type(result) is RemoteActorError
    assert (result.type_name, result.message, result.traceback_text) == (
        "x.Y",
        "msg",
        "tb text",
    )


def test_a_long_traceback_is_cut_to_max_traceback() -> None:
    codec = Codec(max_traceback=100)
    result = codec.decode(*codec.encode_error(raised(Boom("x" * 500))))
    assert type(result) is RemoteActorError
    assert (
        len(result.traceback_text) < 200 and "characters cut" in result.traceback_text
    )


def test_encode_error_never_raises_for_any_exception() -> None:
    codec = Codec()

    class Weird(BaseException):
        args = property(lambda self: 1 / 0)

    tag, body = codec.encode_error(Weird())
    assert isinstance(codec.decode(tag, body), RemoteActorError)
    codec.register(Weird)  # registered, its args still cannot be read
    tag, body = codec.encode_error(Weird())
    result = codec.decode(tag, body)
    assert isinstance(result, RemoteActorError) and result.type_name.endswith("Weird")


# -- bytes from the network ------------------------------------------------------


def test_an_unknown_tag_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="unknown type tag"):
        Codec().decode("os.system", b"\xa2ls")


def test_a_truncated_body_is_a_decode_error() -> None:
    codec = ref_codec()
    tag, body = codec.encode(Greeting("hello", 3))
    for cut in range(len(body)):
        with pytest.raises(DecodeError):
            codec.decode(tag, body[:cut])


def test_a_body_of_the_wrong_shape_is_a_decode_error() -> None:
    codec = ref_codec()
    with pytest.raises(DecodeError):
        codec.decode(codec.tag_of(Point), msgspec.msgpack.encode({"x": "one"}))
    with pytest.raises(DecodeError):
        codec.decode(codec.tag_of(Color), msgspec.msgpack.encode("green"))


def test_deeply_nested_input_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        Codec().decode("list", b"\x91" * 100_000)


@given(st.binary(max_size=200), st.sampled_from(["list", "dict", "str", "tuple"]))
def test_random_bytes_never_raise_anything_but_decode_error(
    data: bytes, tag: str
) -> None:
    codec = ref_codec()
    for each in (tag, codec.tag_of(Envelope), codec.tag_of(Boom), "builtins.KeyError"):
        with contextlib.suppress(DecodeError):
            codec.decode(each, data)


@given(st.binary(min_size=1, max_size=50), st.integers(0, 200))
def test_random_bytes_inside_a_ref_extension_never_raise_anything_but_decode_error(
    data: bytes, code: int
) -> None:
    codec = ref_codec()
    body = msgspec.msgpack.encode([msgspec.msgpack.Ext(code % 128, data)])
    with contextlib.suppress(DecodeError):
        codec.decode("list", body)
