"""The wire format: subjects per node incarnation, frames of envelopes that
decode to what was sent, and frames from the network that only ever raise
DecodeError."""

from __future__ import annotations

import contextlib
import gc

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.remote._codec import Codec
from actors.remote._envelopes import (
    AskEnvelope,
    DeathEnvelope,
    FailureEnvelope,
    HeartbeatAckEnvelope,
    HeartbeatEnvelope,
    LookupEnvelope,
    LookupReplyEnvelope,
    ReplyEnvelope,
    TellEnvelope,
    UnwatchEnvelope,
    WatchEnvelope,
    decode_envelope,
    decode_frame,
)
from actors.remote._errors import DecodeError, RemoteActorError
from actors.remote._node import NodeAddress
from actors.remote._subjects import Subjects
from actors.remote._wire import MAX_FRAME_HEADER, Wire, array_header

ALPHA = NodeAddress("alpha", "0123456789abcdef")
BETA = NodeAddress("beta", "fedcba9876543210")
MAX = 1024 * 1024


class Ping(msgspec.Struct):
    n: int


def codec() -> Codec:
    c = Codec()
    c.register(Ping, "ping")
    return c


# -- subjects ----------------------------------------------------------------------


def test_a_node_incarnation_has_its_own_inbox_and_shares_its_name_subject() -> None:
    subjects = Subjects("shop", ALPHA)
    assert subjects.inbox == "actors.shop.alpha.0123456789abcdef"
    assert subjects.name == "actors.shop.alpha"
    assert subjects.queue == "alpha"
    restarted = Subjects("shop", NodeAddress("alpha", "1111111111111111"))
    assert restarted.inbox != subjects.inbox and restarted.name == subjects.name
    assert subjects.inbox_of(BETA) == "actors.shop.beta.fedcba9876543210"
    assert subjects.name_of("beta") == "actors.shop.beta"


def test_the_return_subject_for_a_peer_names_that_peer() -> None:
    subjects = Subjects("shop", ALPHA, prefix="org.team")
    reply = subjects.return_for(BETA)
    assert reply == "org.team.shop.alpha.0123456789abcdef.nr.beta.fedcba9876543210"
    assert subjects.returns == "org.team.shop.alpha.0123456789abcdef.nr.>"
    assert subjects.peer_of_return(reply) == BETA
    assert subjects.peer_of_return(subjects.inbox) is None
    assert subjects.peer_of_return(subjects.return_prefix + "beta.nothex") is None
    assert subjects.peer_of_return(reply + "\n") is None


@pytest.mark.parametrize("system", ["", "a.b", "a b", "*", ">", "x" * 65])
def test_a_system_name_that_is_not_one_subject_token_is_a_value_error(
    system: str,
) -> None:
    with pytest.raises(ValueError, match="system must be"):
        Subjects(system, ALPHA)


@pytest.mark.parametrize("prefix", ["", ".a", "a.", "a..b", "a.*", "a b", "a\n"])
def test_a_bad_prefix_is_a_value_error(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        Subjects("s", ALPHA, prefix=prefix)


def test_bad_name_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="system must be a str"):
        Subjects(1, ALPHA)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="node must be a str"):
        NodeAddress.new(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="node must be"):
        Subjects("s", ALPHA).name_of("a.b")


# -- frames ------------------------------------------------------------------------


def test_every_envelope_kind_round_trips_in_order() -> None:
    c = codec()
    wire = Wire(c, ALPHA)
    frame = wire.frame(
        [
            wire.tell("/user/a", Ping(1)),
            wire.tell("/user/a", "traced", trace="00-abc-def-01"),
            wire.ask("/user/b", 7, Ping(2)),
            wire.reply(7, [1, "two"]),
            wire.failure(8, KeyError("k")),
            wire.watch("/user/c"),
            wire.unwatch("/user/c"),
            wire.death("/user/c", RuntimeError("gone")),
            wire.death("/user/d", "normal"),
            wire.heartbeat(3),
            wire.heartbeat_ack(3),
            wire.lookup(9, "/user/e"),
            wire.lookup_reply(9, True),
        ]
    )
    decoded = decode_frame(frame, MAX)
    assert decoded.version == 1 and decoded.sender == ALPHA
    kinds = [type(e) for e in decoded.envelopes]
    assert kinds == [
        TellEnvelope,
        TellEnvelope,
        AskEnvelope,
        ReplyEnvelope,
        FailureEnvelope,
        WatchEnvelope,
        UnwatchEnvelope,
        DeathEnvelope,
        DeathEnvelope,
        HeartbeatEnvelope,
        HeartbeatAckEnvelope,
        LookupEnvelope,
        LookupReplyEnvelope,
    ]
    e = decoded.envelopes
    assert (
        isinstance(e[0], TellEnvelope) and e[0].path == "/user/a" and e[0].trace is None
    )
    assert c.decode(e[0].tag, e[0].body) == Ping(1)
    assert isinstance(e[1], TellEnvelope) and e[1].trace == "00-abc-def-01"
    assert isinstance(e[2], AskEnvelope) and e[2].ask_id == 7
    assert c.decode(e[2].tag, e[2].body) == Ping(2)
    assert isinstance(e[3], ReplyEnvelope) and c.decode(e[3].tag, e[3].body) == [
        1,
        "two",
    ]
    assert isinstance(e[4], FailureEnvelope)
    assert type(c.decode(e[4].tag, e[4].body)) is KeyError
    assert isinstance(e[7], DeathEnvelope) and type(c.decode(e[7].tag, e[7].body)) is (
        RuntimeError
    )
    assert isinstance(e[8], DeathEnvelope) and c.decode(e[8].tag, e[8].body) == "normal"
    assert e[9] == HeartbeatEnvelope(3) and e[10] == HeartbeatAckEnvelope(3)
    assert e[11] == LookupEnvelope(9, "/user/e") and e[12] == LookupReplyEnvelope(
        9, True
    )


def test_a_decoded_frame_costs_the_cyclic_garbage_collector_nothing() -> None:
    # Frames, envelopes and node addresses hold no containers that could
    # close a cycle: untracked, so reading frames triggers fewer collections.
    wire = Wire(codec(), ALPHA)
    frame = wire.frame([wire.ask("/user/b", 7, Ping(2)), wire.reply(7, "ok")])
    decoded = decode_frame(frame, MAX)
    assert not gc.is_tracked(decoded)
    assert not gc.is_tracked(decoded.sender)
    assert not any(gc.is_tracked(envelope) for envelope in decoded.envelopes)


def test_a_failure_of_an_unknown_exception_type_decodes_as_remote_actor_error() -> None:
    class Mine(Exception):
        pass

    c = codec()
    wire = Wire(c, ALPHA)
    (failure,) = decode_frame(wire.frame([wire.failure(1, Mine("m"))]), MAX).envelopes
    assert isinstance(failure, FailureEnvelope)
    assert type(c.decode(failure.tag, failure.body)) is RemoteActorError


def test_telling_an_unregistered_message_is_a_type_error_naming_it() -> None:
    class Secret:
        pass

    wire = Wire(codec(), ALPHA)
    with pytest.raises(TypeError, match="Secret"):
        wire.tell("/user/a", Secret())
    with pytest.raises(TypeError, match="Secret"):
        wire.ask("/user/a", 1, Secret())
    with pytest.raises(TypeError, match="Secret"):
        wire.reply(1, Secret())


def test_a_frame_from_a_program_that_is_not_a_node_has_no_sender() -> None:
    # What a nats-py program sends (docs/remote-wire-format.md): plain msgspec.
    frame = msgspec.msgpack.encode([1, None, [[1, "/user/greeter", 1, "str", "hi"]]])
    (ask,) = decode_frame(frame, MAX).envelopes
    assert decode_frame(frame, MAX).sender is None
    assert isinstance(ask, AskEnvelope) and ask.ask_id == 1
    assert codec().decode(ask.tag, ask.body) == "hi"


def test_a_frame_holds_more_than_fifteen_and_more_than_65535_envelopes() -> None:
    wire = Wire(codec(), ALPHA)
    for n in (15, 16, 70_000):
        frame = wire.frame([wire.heartbeat(i) for i in range(n)])
        decoded = decode_frame(frame, 10 * MAX)
        assert [e.seq for e in decoded.envelopes] == list(range(n))  # type: ignore[union-attr]


def test_array_headers_match_msgpack() -> None:
    for n in (0, 1, 15, 16, 65535, 65536):
        assert (
            array_header(n)
            == msgspec.msgpack.encode([None] * n)[: len(array_header(n))]
        )
        assert len(array_header(n)) <= MAX_FRAME_HEADER


def test_an_envelope_of_max_envelope_bytes_fits_a_frame_of_max_payload() -> None:
    wire = Wire(codec(), ALPHA)
    limit = wire.max_envelope(1000)
    base = len(wire.tell("/user/a", ""))
    envelope = wire.tell("/user/a", "x" * (limit - base - 2))  # str16 header: +2
    assert len(envelope) == limit
    assert len(wire.frame([envelope])) <= 1000


def test_an_oversize_frame_is_a_decode_error_before_it_is_parsed() -> None:
    wire = Wire(codec(), ALPHA)
    frame = wire.frame([wire.tell("/user/a", "x" * 100)])
    with pytest.raises(DecodeError, match="over the limit"):
        decode_frame(frame, len(frame) - 1)
    assert decode_frame(frame, len(frame)).envelopes


@pytest.mark.parametrize(
    "frame",
    [
        msgspec.msgpack.encode([2, None, []]),  # another version
        msgspec.msgpack.encode([1, None, [[99, "x"]]]),  # unknown kind
        msgspec.msgpack.encode([1, None, [[0, "/a"]]]),  # too short
        msgspec.msgpack.encode([1, ["a.b", "0123456789abcdef"], []]),  # bad node
        msgspec.msgpack.encode([1, ["a", "XYZ"], []]),  # bad incarnation
        msgspec.msgpack.encode([1, ["a\n", "0123456789abcdef"], []]),  # newline
        msgspec.msgpack.encode([1, ["a", "0123456789abcdef\n"], []]),
        msgspec.msgpack.encode([1, None, [[0, "", "str", "x"]]]),  # empty path
        msgspec.msgpack.encode([1, None, [[4, "x" * 2000]]]),  # path too long
        msgspec.msgpack.encode([1, None, [[7, -1]]]),  # negative id
        msgspec.msgpack.encode({"version": 1}),
        b"",
        b"\xc1",
    ],
)
def test_a_malformed_frame_is_a_decode_error(frame: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_frame(frame, MAX)


def test_every_truncation_of_a_frame_is_a_decode_error() -> None:
    wire = Wire(codec(), ALPHA)
    frame = wire.frame([wire.tell("/user/a", Ping(1)), wire.ask("/b", 2, "x")])
    for cut in range(len(frame)):
        with pytest.raises(DecodeError):
            decode_frame(frame[:cut], MAX)


@given(st.binary(max_size=300))
def test_random_bytes_as_a_frame_never_raise_anything_but_decode_error(
    data: bytes,
) -> None:
    try:
        frame = decode_frame(data, MAX)
    except DecodeError:
        return
    c = codec()
    for envelope in frame.envelopes:
        if isinstance(
            envelope,
            TellEnvelope
            | AskEnvelope
            | ReplyEnvelope
            | FailureEnvelope
            | DeathEnvelope,
        ):
            with contextlib.suppress(DecodeError):
                c.decode(envelope.tag, envelope.body)


@given(st.data())
def test_mutated_frames_never_raise_anything_but_decode_error(
    data: st.DataObject,
) -> None:
    wire = Wire(codec(), ALPHA)
    frame = bytearray(
        wire.frame(
            [
                wire.tell("/user/a", Ping(1)),
                wire.failure(3, ValueError("v")),
                wire.death("/user/x", KeyError("k")),
                wire.lookup(1, "/user/b"),
            ]
        )
    )
    for _ in range(data.draw(st.integers(1, 5))):
        index = data.draw(st.integers(0, len(frame) - 1))
        frame[index] = data.draw(st.integers(0, 255))
    c = codec()
    try:
        decoded = decode_frame(bytes(frame), MAX)
    except DecodeError:
        return
    for envelope in decoded.envelopes:
        if isinstance(
            envelope,
            TellEnvelope
            | AskEnvelope
            | ReplyEnvelope
            | FailureEnvelope
            | DeathEnvelope,
        ):
            with contextlib.suppress(DecodeError):
                c.decode(envelope.tag, envelope.body)


paths = st.text(min_size=1, max_size=40).map(lambda s: "/user/" + s)
ids = st.integers(0, 2**63 - 1)
values = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text()


@st.composite
def envelopes(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    kind = draw(
        st.sampled_from(
            ["tell", "ask", "reply", "watch", "unwatch", "heartbeat", "lookup"]
        )
    )
    if kind == "tell":
        return kind, (draw(paths), draw(values), draw(st.none() | st.text(max_size=50)))
    if kind == "ask":
        return kind, (draw(paths), draw(ids), draw(values))
    if kind == "reply":
        return kind, (draw(ids), draw(values))
    if kind in ("watch", "unwatch"):
        return kind, (draw(paths),)
    if kind == "heartbeat":
        return kind, (draw(ids),)
    return kind, (draw(ids), draw(paths))


@given(st.lists(envelopes(), max_size=40), st.booleans())
def test_frames_of_random_envelopes_decode_to_what_was_sent(
    sent: list[tuple[str, tuple[object, ...]]], from_a_node: bool
) -> None:
    c = codec()
    wire = Wire(c, ALPHA if from_a_node else None)
    encoded = [getattr(wire, kind)(*args) for kind, args in sent]
    frame = decode_frame(wire.frame(encoded), 10 * MAX)
    assert frame.sender == (ALPHA if from_a_node else None)
    assert len(frame.envelopes) == len(sent)
    for (kind, args), envelope, data in zip(
        sent, frame.envelopes, encoded, strict=True
    ):
        assert decode_envelope(data) == envelope
        if kind == "tell":
            assert isinstance(envelope, TellEnvelope)
            assert (envelope.path, envelope.trace) == (args[0], args[2])
            assert c.decode(envelope.tag, envelope.body) == args[1]
        elif kind == "ask":
            assert isinstance(envelope, AskEnvelope)
            assert (envelope.path, envelope.ask_id) == args[:2]
            assert c.decode(envelope.tag, envelope.body) == args[2]
        elif kind == "reply":
            assert isinstance(envelope, ReplyEnvelope) and envelope.ask_id == args[0]
            assert c.decode(envelope.tag, envelope.body) == args[1]
        elif kind == "watch":
            assert envelope == WatchEnvelope(*args)  # type: ignore[arg-type]
        elif kind == "unwatch":
            assert envelope == UnwatchEnvelope(*args)  # type: ignore[arg-type]
        elif kind == "heartbeat":
            assert envelope == HeartbeatEnvelope(*args)  # type: ignore[arg-type]
        else:
            assert envelope == LookupEnvelope(*args)  # type: ignore[arg-type]


def test_a_malformed_envelope_alone_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="malformed envelope"):
        decode_envelope(b"\x92\x63\x00")
