"""Authentication (user/password, token, NKey, creds file) and TLS against a
real nats-server started with those options."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import ssl
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from anyio.abc import SocketStream

from actors.nats import AuthorizationError, NatsServer, NoServersError, connect
from actors.nats._auth import read_creds_file

from .conftest import fake_server, read_until

pytestmark = pytest.mark.anyio


async def _roundtrip(url: str, subject: str, **options: object) -> bytes:
    async with connect(url, **options) as nc:
        sub = await nc.subscribe(subject)
        await nc.flush()
        await nc.publish(subject, b"authorized")
        return (await sub.next_msg(timeout=5)).data


async def test_user_and_password_are_accepted_and_wrong_ones_refused(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory(args=["--user", "alice", "--pass", "s3cret"])
    assert (
        await _roundtrip(server.url, subject, user="alice", password="s3cret")
        == b"authorized"
    )
    url_with_credentials = server.url.replace("nats://", "nats://alice:s3cret@")
    assert await _roundtrip(url_with_credentials, subject) == b"authorized"
    # A URL's own credentials win over the options for that server.
    assert (
        await _roundtrip(url_with_credentials, subject, user="alice", password="no")
        == b"authorized"
    )
    with pytest.raises(AuthorizationError):
        async with connect(server.url, user="alice", password="wrong"):
            pass
    with pytest.raises(AuthorizationError):
        async with connect(server.url):
            pass


async def test_a_token_is_accepted_and_a_wrong_one_refused(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    server = nats_server_factory(args=["--auth", "t0ken"])
    assert await _roundtrip(server.url, subject, token="t0ken") == b"authorized"
    url_with_token = server.url.replace("nats://", "nats://t0ken@")
    assert await _roundtrip(url_with_token, subject) == b"authorized"
    with pytest.raises(AuthorizationError):
        async with connect(server.url, token="nope"):
            pass


async def test_an_nkey_seed_signs_the_servers_nonce(
    nats_server_factory: Callable[..., NatsServer], subject: str
) -> None:
    nkeys = pytest.importorskip("nkeys")
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    public = nkeys.from_seed(bytearray(seed)).public_key.decode()
    other = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    server = nats_server_factory(
        config=f'authorization {{ users = [ {{ nkey: "{public}" }} ] }}\n'
    )
    assert await _roundtrip(server.url, subject, nkey_seed=seed) == b"authorized"
    assert (
        await _roundtrip(server.url, subject, nkey_seed=seed.decode()) == b"authorized"
    )
    with pytest.raises(AuthorizationError):
        async with connect(server.url, nkey_seed=other):
            pass
    with pytest.raises(ValueError, match="nkey_seed"):
        async with connect(server.url, nkey_seed=b"SUNOTASEED"):
            pass


def test_a_creds_file_gives_its_jwt_and_seed(tmp_path: Path) -> None:
    creds = tmp_path / "user.creds"
    creds.write_text(
        "-----BEGIN NATS USER JWT-----\n"
        "eyJ0eXAiOiJKV1QifQ.payload.sig\n"
        "------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        "SUAEXAMPLESEED\n"
        "------END USER NKEY SEED------\n"
    )
    assert read_creds_file(creds) == (
        "eyJ0eXAiOiJKV1QifQ.payload.sig",
        b"SUAEXAMPLESEED",
    )
    (tmp_path / "bad.creds").write_text("nothing here\n")
    with pytest.raises(ValueError, match="creds"):
        read_creds_file(tmp_path / "bad.creds")


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path, ssl.SSLContext]:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert_file, key_file = tmp_path / "server.pem", tmp_path / "server.key"
    cert.cert_chain_pems[0].write_to_path(cert_file)
    cert.private_key_pem.write_to_path(key_file)
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return cert_file, key_file, context


async def test_tls_upgrades_after_info_when_the_server_requires_it(
    nats_server_factory: Callable[..., NatsServer],
    subject: str,
    tls_files: tuple[Path, Path, ssl.SSLContext],
) -> None:
    cert_file, key_file, context = tls_files
    server = nats_server_factory(
        config=f'tls {{ cert_file: "{cert_file}", key_file: "{key_file}" }}\n'
    )
    assert await _roundtrip(server.url, subject, tls=context) == b"authorized"
    tls_url = server.url.replace("nats://", "tls://")
    assert await _roundtrip(tls_url, subject, tls=context) == b"authorized"
    # The default context does not trust the test CA: the handshake fails.
    with pytest.raises(NoServersError) as caught:
        async with connect(server.url):
            pass
    assert isinstance(caught.value.__cause__, ssl.SSLError)


async def test_a_creds_file_sends_its_jwt_and_signs_the_nonce_with_its_seed(
    tmp_path: Path,
) -> None:
    nkeys = pytest.importorskip("nkeys")
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    creds = tmp_path / "user.creds"
    creds.write_text(
        "-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5In0.e30.c2ln\n"
        "------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{seed.decode()}\n"
        "------END USER NKEY SEED------\n"
    )
    seen: list[dict[str, str]] = []

    async def handler(stream: SocketStream) -> None:
        await stream.send(b'INFO {"server_id":"FAKE","nonce":"n0nce-123"}\r\n')
        buffer = bytearray()
        await read_until(stream, b"PING\r\n", buffer)
        seen.append(json.loads(bytes(buffer).split(b"\r\n", 1)[0][8:]))
        await stream.send(b"PONG\r\n")
        with contextlib.suppress(anyio.EndOfStream):
            while True:
                await stream.receive()

    async with (
        fake_server(handler) as url,
        connect(url, creds_file=creds, close_timeout=0),
    ):
        pass
    (options,) = seen
    assert options["jwt"] == "eyJhbGciOiJlZDI1NTE5In0.e30.c2ln"
    assert "nkey" not in options
    signature = base64.urlsafe_b64decode(options["sig"] + "==")
    keys = nkeys.from_seed(bytearray(seed))
    assert keys.verify(b"n0nce-123", signature)


async def test_tls_files_trust_a_private_ca_and_present_a_client_certificate(
    nats_server_factory: Callable[..., NatsServer], subject: str, tmp_path: Path
) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server_cert = ca.issue_cert("127.0.0.1", "localhost")
    client_cert = ca.issue_cert("node@example.com")
    ca_file, cert_file, key_file = (tmp_path / n for n in ("ca.pem", "c.pem", "c.key"))
    server_file, server_key = tmp_path / "server.pem", tmp_path / "server.key"
    ca.cert_pem.write_to_path(ca_file)
    server_cert.cert_chain_pems[0].write_to_path(server_file)
    server_cert.private_key_pem.write_to_path(server_key)
    client_cert.cert_chain_pems[0].write_to_path(cert_file)
    client_cert.private_key_pem.write_to_path(key_file)
    server = nats_server_factory(
        config=(
            f'tls {{ cert_file: "{server_file}", key_file: "{server_key}", '
            f'ca_file: "{ca_file}", verify: true }}\n'
        )
    )
    files = {"tls_ca_file": ca_file, "tls_cert_file": cert_file}
    assert (
        await _roundtrip(server.url, subject, tls_key_file=key_file, **files)
        == b"authorized"
    )
    # Without the client certificate the server refuses the connection.
    with pytest.raises(NoServersError):
        async with connect(server.url, tls_ca_file=ca_file, connect_timeout=2):
            pass
    with pytest.raises(ValueError, match="not both"):
        connect_args = {"tls": ssl.create_default_context(), **files}
        async with connect(server.url, **connect_args):
            pass
    with pytest.raises(ValueError, match="tls_cert_file"):
        async with connect(server.url, tls_key_file=key_file):
            pass
