"""Node identity: a name and a random incarnation per start; addresses of
nodes and actors; and no pickle anywhere on the way from bytes to values."""

from __future__ import annotations

import re
import subprocess
import sys

import msgspec
import pytest

from actors.remote._node import NodeAddress, RefAddress, check_token, new_incarnation


def test_every_start_of_a_node_is_a_new_incarnation() -> None:
    first, second = NodeAddress.new("web"), NodeAddress.new("web")
    assert first.node == second.node == "web"
    assert first != second and first.incarnation != second.incarnation
    assert re.fullmatch(r"[0-9a-f]{16}", first.incarnation)
    assert len({new_incarnation() for _ in range(1000)}) == 1000


def test_addresses_compare_by_value_and_hash() -> None:
    a = NodeAddress("web", "0123456789abcdef")
    assert a == NodeAddress("web", "0123456789abcdef")
    assert {a: 1}[NodeAddress("web", "0123456789abcdef")] == 1
    ref = RefAddress("web", "0123456789abcdef", "/user/x")
    assert ref.node_address == a
    assert str(a) == "web#0123456789abcdef"
    assert str(ref) == "web#0123456789abcdef/user/x"


def test_addresses_travel_as_arrays() -> None:
    ref = RefAddress("web", "0123456789abcdef", "/user/x")
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(ref)) == [
        "web",
        "0123456789abcdef",
        "/user/x",
    ]


@pytest.mark.parametrize("name", ["web-1", "A_b", "x" * 64])
def test_a_name_of_one_subject_token_is_accepted(name: str) -> None:
    assert check_token("node", name) == name


@pytest.mark.parametrize("name", ["", "a.b", "a b", "a*", ">", "é", "x" * 65, "a\n"])
def test_a_name_that_is_not_one_subject_token_is_a_value_error(name: str) -> None:
    with pytest.raises(ValueError, match="node must be 1 to 64"):
        NodeAddress.new(name)


def test_decoding_frames_and_bodies_never_imports_pickle() -> None:
    code = (
        "import sys\n"
        "from actors.remote._codec import Codec\n"
        "from actors.remote._node import NodeAddress\n"
        "from actors.remote._envelopes import decode_frame\n"
        "from actors.remote._wire import Wire\n"
        "c = Codec(); w = Wire(c, NodeAddress.new('a'))\n"
        "f = decode_frame(w.frame([w.tell('/p', {'k': [1, 2.0]}), "
        "w.failure(1, ValueError('v'))]), 1 << 20)\n"
        "[c.decode(e.tag, e.body) for e in f.envelopes]\n"
        "assert 'pickle' not in sys.modules, 'pickle was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
