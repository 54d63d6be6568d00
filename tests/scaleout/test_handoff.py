"""The handoff of a node's connection to the node processes it starts: what
goes through the pipe comes out the same, what cannot go is refused at the
call, and what comes in malformed is refused by the child."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

import pytest

from actors.remote.scaleout import Handoff, read_handoff


def test_a_handoff_comes_out_of_the_pipe_as_it_went_in(tmp_path: Path) -> None:
    creds = tmp_path / "user.creds"
    handoff = Handoff(
        ["nats://alice:pw@127.0.0.1:4222", "nats://127.0.0.1:4223"],
        {
            "user": "alice",
            "password": "pw",
            "nkey_seed": b"SUAEXAMPLE",
            "creds_file": creds,
            "tls_ca_file": "ca.pem",
            "reconnect_wait": 0.5,
            "allow_reconnect": True,
            "tls": None,
            "name": "the parent's own",
            "error_callback": print,
        },
        (b"k" * 16, b"j" * 20),
    )
    read_end, write_end = os.pipe()
    with open(write_end, "wb") as pipe:
        pipe.write(handoff.to_json())
    got = read_handoff(read_end)
    assert list(got.servers) == list(handoff.servers)
    assert got.client_options == {
        "user": "alice",
        "password": "pw",
        "nkey_seed": b"SUAEXAMPLE",
        "creds_file": str(creds),
        "tls_ca_file": os.path.abspath("ca.pem"),
        "reconnect_wait": 0.5,
        "allow_reconnect": True,
    }
    assert tuple(got.secret) == (b"k" * 16, b"j" * 20)


def test_what_cannot_be_handed_down_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="tls_ca_file"):
        Handoff(["nats://h"], {"tls": ssl.create_default_context()})
    with pytest.raises(TypeError, match="'ping'"):
        Handoff(["nats://h"], {"ping": object()})


@pytest.mark.parametrize(
    "data",
    [b"", b"[]", b'{"servers": []}', b'{"servers": ["x"], "client_options": 1}'],
)
def test_a_malformed_handoff_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="handoff"):
        Handoff.from_json(data)


def test_the_node_options_come_out_of_the_pipe_as_they_went_in() -> None:
    options = {"share": 16, "window": 1 << 19, "heartbeat_interval": 0.5}
    handoff = Handoff(["nats://h"], {}, (), options)
    read_end, write_end = os.pipe()
    with open(write_end, "wb") as pipe:
        pipe.write(handoff.to_json())
    assert read_handoff(read_end).node_options == options


def test_a_node_option_that_cannot_be_handed_down_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="'url'"):
        Handoff(["nats://h"], {}, (), {"url": 1})
    with pytest.raises(TypeError, match="'share' must be a number"):
        Handoff(["nats://h"], {}, (), {"share": "many"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="'share' must be a number"):
        Handoff(["nats://h"], {}, (), {"share": True})


@pytest.mark.parametrize(
    "node_options",
    [b"[]", b'{"codec": 1}', b'{"share": "x"}', b'{"share": null}'],
)
def test_a_handoff_with_malformed_node_options_is_refused(node_options: bytes) -> None:
    data = b'{"servers": ["x"], "client_options": {}, "secret": [], '
    with pytest.raises(ValueError, match="handoff"):
        Handoff.from_json(data + b'"node_options": ' + node_options + b"}")
