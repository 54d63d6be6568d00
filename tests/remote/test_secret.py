"""The cluster secret's keys and tags, without a server: what is accepted
as a secret, sealing and opening (rotation included), and that any change
of subject, frame number or bytes fails."""

from __future__ import annotations

import pytest

from actors.remote import Remote
from actors.remote._secret import MAC_SIZE, Secret, check_secret

KEY = b"k" * 32
OLD = b"o" * 32


def test_a_secret_is_bytes_or_a_sequence_of_bytes() -> None:
    assert check_secret(None) is None
    assert check_secret(KEY) == (KEY,)
    assert check_secret([KEY, OLD]) == (KEY, OLD)
    assert check_secret(bytearray(KEY)) == (KEY,)


@pytest.mark.parametrize(
    ("secret", "error", "match"),
    [
        ("a str of enough characters", TypeError, "must be bytes"),
        (12345, TypeError, "must be bytes"),
        ([KEY, "str"], TypeError, "each key"),
        (b"short", ValueError, "at least 16 bytes"),
        ([], ValueError, "1 to 8 keys"),
        ([KEY] * 9, ValueError, "1 to 8 keys"),
    ],
)
def test_a_bad_secret_is_refused_naming_what_is_wrong(
    secret: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        check_secret(secret)
    with pytest.raises(error, match=match):
        Remote(secret=secret)  # type: ignore[arg-type]


def test_a_sealed_frame_opens_under_any_key_and_only_unchanged() -> None:
    sealer = Secret((KEY,))
    frame = b"\x93\x01\xc0\x90"
    sealed = sealer.seal("a.s.n.0123456789abcdef", "r.nr.n.i.7", frame)
    assert len(sealed) == len(frame) + MAC_SIZE
    # Rotation: a node with [new, old] opens what the old key sealed.
    assert (
        Secret((OLD, KEY)).open("a.s.n.0123456789abcdef", "r.nr.n.i.7", sealed) == frame
    )
    assert Secret((OLD,)).open("a.s.n.0123456789abcdef", "r.nr.n.i.7", sealed) is None
    # Another receiver, another frame number, no number, a flipped byte, a
    # cut tag: all fail.
    assert sealer.open("a.s.n.fedcba9876543210", "r.nr.n.i.7", sealed) is None
    assert sealer.open("a.s.n.0123456789abcdef", "r.nr.n.i.8", sealed) is None
    assert sealer.open("a.s.n.0123456789abcdef", None, sealed) is None
    flipped = bytes([sealed[0] ^ 1]) + sealed[1:]
    assert sealer.open("a.s.n.0123456789abcdef", "r.nr.n.i.7", flipped) is None
    assert sealer.open("a.s.n.0123456789abcdef", "r.nr.n.i.7", sealed[:-1]) is None
    assert sealer.open("a.s.n.0123456789abcdef", "r.nr.n.i.7", b"") is None


@pytest.mark.parametrize("key", [b"k" * 16, b"k" * 32, bytes(range(64)), b"x" * 100])
def test_a_tag_is_the_hmac_sha256_of_subject_reply_and_frame(key: bytes) -> None:
    import hmac

    for frame in (bytes(range(256)) * 3, bytes(range(256)) * 1000):  # one, two updates
        sealed = Secret((key,)).seal("s.a.b.c", "r.nr.x.y.5", frame)
        expected = hmac.digest(key, b"s.a.b.c r.nr.x.y.5 " + frame, "sha256")
        assert sealed == frame + expected
        assert Secret((key,)).open("s.a.b.c", "r.nr.x.y.5", sealed) == frame
    assert Secret((key,)).seal("s", None, b"f")[1:] == hmac.digest(
        key, b"s  f", "sha256"
    )
