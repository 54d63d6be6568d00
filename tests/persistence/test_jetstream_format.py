"""The JetStream journal's stored layout: round trips, the escaping of
persistence ids, and bytes that do not hold what their headers say (read
from a stream anyone may publish to) refused with a JournalError."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.persistence import JournalError, StoredEvent, StoredSnapshot
from actors.persistence._jetstream_format import (
    decode_events,
    decode_snapshot,
    decode_state,
    encode_events,
    encode_snapshot,
    encode_state,
    escape,
    numbers_of,
)

ids = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1
).filter(str.isprintable)


@given(ids, ids)
def test_escaping_is_one_to_one_and_makes_a_subject_token(a: str, b: str) -> None:
    assert re.fullmatch(r"[A-Za-z0-9_=-]+", escape(a))
    assert (escape(a) == escape(b)) == (a == b)


@given(st.lists(st.tuples(st.text(max_size=20), st.binary(max_size=50)), min_size=1))
def test_events_round_trip(items: list[tuple[str, bytes]]) -> None:
    written = [
        StoredEvent("p", n, manifest, payload, f"w{n}", 1.5 * n)
        for n, (manifest, payload) in enumerate(items, 1)
    ]
    data = encode_events(written)
    assert decode_events("p", data, 1, len(written), 7) == written


def test_malformed_event_payloads_are_refused() -> None:
    data = encode_events([StoredEvent("p", 1, "m", b"payload", "w", 0.0)])
    for bad, first, last in (
        (data[:-1], 1, 1),  # truncated
        (data + b"x", 1, 1),  # trailing bytes
        (data, 1, 2),  # fewer events than the headers say
        (data + data, 1, 1),  # more
        (b"\x00\x05\x00" + b"\x00" * 12 + b"\xff\xfe\xfd\xfc\xfb", 1, 1),
    ):
        with pytest.raises(JournalError):
            decode_events("p", bad, first, last, 3)


def test_headers_that_are_not_a_journal_message_s_are_refused() -> None:
    assert numbers_of({"Actors-First": "2", "Actors-Last": "4"}, 1) == (2, 4)
    for headers in (
        {},
        {"Actors-First": "2"},
        {"Actors-First": "4", "Actors-Last": "2"},
        {"Actors-First": "0", "Actors-Last": "2"},
        {"Actors-First": "-1", "Actors-Last": "2"},
        {"Actors-First": "1", "Actors-Last": "x"},
    ):
        with pytest.raises(JournalError):
            numbers_of(headers, 9)


def test_snapshots_and_states_round_trip_and_refuse_garbage() -> None:
    snapshot = StoredSnapshot("p", 5, "s@1", b"state", 3.25)
    assert decode_snapshot("p", 5, encode_snapshot(snapshot)) == snapshot
    assert decode_state("p", encode_state("s@2", b"x")) == ("s@2", b"x")
    for bad in (b"", b"\x00", b"\xff\xff" + b"\x00" * 8):
        with pytest.raises(JournalError):
            decode_snapshot("p", 1, bad)
    for bad in (b"", b"\x00\x09abc"):
        with pytest.raises(JournalError):
            decode_state("p", bad)
