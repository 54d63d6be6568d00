"""Credentials for the CONNECT line: user/password, token, NKey seed, creds file.

NKey and JWT authentication sign the server's nonce with an Ed25519 seed; the
signing comes from the optional ``nkeys`` package, imported only when such
credentials are used.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["Credentials", "read_creds_file"]


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a client presents to the server (any that is set)."""

    user: str | None = None
    password: str | None = None
    token: str | None = None
    nkey_seed: bytes | None = None
    jwt: str | None = None

    def connect_fields(self, nonce: str | None) -> dict[str, Any]:
        """The CONNECT fields for these credentials; signs ``nonce`` if need be.

        Raises:
            ImportError: an NKey seed is set and the ``nkeys`` package is missing.
            ValueError: an NKey seed is set and the server sent no nonce, or the
                seed is not a valid NKey seed.
        """
        fields: dict[str, Any] = {}
        if self.user is not None:
            fields["user"] = self.user
        if self.password is not None:
            fields["pass"] = self.password
        if self.token is not None:
            fields["auth_token"] = self.token
        if self.nkey_seed is not None:
            if nonce is None:
                raise ValueError(
                    "the server sent no nonce to sign: it does not use NKey auth"
                )
            signature, public_key = _sign(self.nkey_seed, nonce.encode())
            fields["sig"] = signature
            if self.jwt is not None:
                fields["jwt"] = self.jwt
            else:
                fields["nkey"] = public_key
        return fields


def _sign(seed: bytes, nonce: bytes) -> tuple[str, str]:
    try:
        import nkeys
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "NKey and creds-file authentication need the 'nkeys' package: "
            "pip install nkeys"
        ) from exc
    try:
        keys = nkeys.from_seed(bytearray(seed))
    except Exception as exc:
        raise ValueError(f"nkey_seed is not a valid NKey seed: {exc}") from None
    try:
        signature = base64.urlsafe_b64encode(keys.sign(nonce)).rstrip(b"=").decode()
        public_key = bytes(keys.public_key).decode()
    finally:
        keys.wipe()
    return signature, public_key


def read_creds_file(path: str | os.PathLike[str]) -> tuple[str, bytes]:
    """Read a NATS ``.creds`` file: (user JWT, user NKey seed).

    Raises:
        OSError: the file cannot be read.
        ValueError: the file lacks the JWT or the seed block.
    """
    with open(path, "rb") as f:
        lines = [line.strip() for line in f.read().splitlines()]
    jwt = _block(lines, b"BEGIN NATS USER JWT")
    seed = _block(lines, b"BEGIN USER NKEY SEED")
    if jwt is None or seed is None:
        raise ValueError(f"{os.fspath(path)!r} is not a NATS creds file (JWT and seed)")
    return jwt.decode(), seed


def _block(lines: list[bytes], marker: bytes) -> bytes | None:
    for index, line in enumerate(lines):
        if marker in line:
            for body in lines[index + 1 :]:
                if body and not body.startswith(b"--"):
                    return body
            return None
    return None
