"""A JetStream journal refuses bad arguments before any network I/O, and a
journal whose setup fails after connecting closes its own client before the
error leaves ``async with``: the client's task group, entered by the
journal's task, is never abandoned (it corrupted the loop's cancel scopes:
asyncio's "exit cancel scope in a different task", Trio's internal error)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.persistence import JetStreamJournal, JournalError
from actors.testing import dilated

pytestmark = pytest.mark.anyio

#: A port nobody listens on: a journal that tried to connect would fail
#: with JournalError, not the ValueError the tests expect.
_NOWHERE = "nats://127.0.0.1:1"


@pytest.mark.parametrize("prefix", ["", "a.>", "a.*", "a..b", ".a", "a.", "a b", ">"])
def test_a_bad_subject_prefix_is_refused_naming_it(prefix: str) -> None:
    with pytest.raises(ValueError, match="subject_prefix"):
        JetStreamJournal(_NOWHERE, stream="S", subject_prefix=prefix)


def test_a_subject_prefix_that_is_not_a_str_is_refused() -> None:
    with pytest.raises(TypeError, match="subject_prefix"):
        JetStreamJournal(_NOWHERE, stream="S", subject_prefix=b"a")  # type: ignore[arg-type]


@pytest.mark.parametrize("replicas", [0, -1, 6])
def test_replicas_outside_one_to_five_are_refused_naming_them(replicas: int) -> None:
    with pytest.raises(ValueError, match="replicas"):
        JetStreamJournal(_NOWHERE, stream="S", replicas=replicas)


@pytest.mark.parametrize("replicas", [True, 1.0, "1"])
def test_replicas_that_are_not_an_int_are_refused(replicas: Any) -> None:
    with pytest.raises(TypeError, match="replicas"):
        JetStreamJournal(_NOWHERE, stream="S", replicas=replicas)


def test_a_good_subject_prefix_makes_the_journal_s_subjects() -> None:
    journal = JetStreamJournal(_NOWHERE, stream="S", subject_prefix="app.j-1")
    assert journal._config.subjects == ("app.j-1.>",)
    default = JetStreamJournal(_NOWHERE, stream="S")
    assert default._config.subjects == ("journal.S.>",)


async def test_a_setup_the_server_refuses_closes_the_client_and_raises_journal_error(
    jetstream_server: NatsServer,
) -> None:
    # Three replicas on one server: the stream is refused after connecting.
    # Inside a deadline, as the tester's run: the abandoned task group once
    # replaced the JournalError with a RuntimeError about cancel scopes.
    with anyio.fail_after(dilated(8)):
        journal = JetStreamJournal(
            jetstream_server.url, stream=f"R{new_nuid(10)}", replicas=3
        )
        with pytest.raises(JournalError, match="make the stream"):
            async with journal:
                pytest.fail("entered a journal whose stream was refused")
        client = journal._client
        assert client is not None and client.is_closed
        # The loop is sound: the next journal of the run works.
        async with JetStreamJournal(
            jetstream_server.url, stream=f"R{new_nuid(10)}"
        ) as good:
            assert await good.highest_sequence_nr("p") == 0


async def test_a_setup_cancelled_after_connecting_closes_the_client(
    nats_server: NatsServer,
) -> None:
    # A server without JetStream: the setup retries (a transient error) until
    # it is cancelled, after the client connected.
    journal = JetStreamJournal(nats_server.url, stream=f"C{new_nuid(10)}")
    with anyio.move_on_after(dilated(1.0)) as scope:
        async with journal:
            pytest.fail("entered a journal without JetStream")
    assert scope.cancelled_caught
    client = journal._client
    assert client is not None and client.is_closed
    with pytest.raises(JournalError):  # closed: entering again fails at once
        async with journal:
            pass
