"""Decentralized NATS authentication for the tests: an operator, an account
and its users, as NATS JWTs (version 2 claims, signed with ed25519 NKeys as
``nsc`` signs them), a server configuration that trusts the operator with a
memory resolver holding the account, and ``.creds`` files for the users.

The claims carry what nats-server checks: the issuer's and subject's public
keys, the claim type and version, and limits where ``-1`` is "no limit"."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

_UNLIMITED_ACCOUNT = {
    "subs": -1,
    "data": -1,
    "payload": -1,
    "imports": -1,
    "exports": -1,
    "wildcards": True,
    "conn": -1,
    "leaf": -1,
}


_UNLIMITED_USER = {"subs": -1, "data": -1, "payload": -1}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Key:
    """An NKey pair of one kind (operator, account or user)."""

    def __init__(self, prefix: int) -> None:
        nkeys = pytest.importorskip("nkeys")
        self.seed: bytes = nkeys.encode_seed(os.urandom(32), prefix)
        self._pair = nkeys.from_seed(bytearray(self.seed))
        self.public: str = self._pair.public_key.decode()

    def sign(self, subject: Key, name: str, nats: dict[str, Any]) -> str:
        """A JWT issued by this key about ``subject``."""
        claims: dict[str, Any] = {
            "jti": "",
            "iat": int(time.time()),
            "iss": self.public,
            "name": name,
            "sub": subject.public,
            "nats": {**nats, "version": 2},
        }
        digest = hashlib.sha512(json.dumps(claims, separators=(",", ":")).encode())
        claims["jti"] = base64.b32encode(digest.digest()[:32]).decode().rstrip("=")
        head = _b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = self._pair.sign(f"{head}.{body}".encode())
        return f"{head}.{body}.{_b64(signature)}"


class Operator:
    """An operator trusting one account (``account``) in a memory resolver;
    ``stranger`` is an account the server does not know."""

    def __init__(self) -> None:
        nkeys = pytest.importorskip("nkeys")
        self.key = Key(nkeys.PREFIX_BYTE_OPERATOR)
        self.account = Key(nkeys.PREFIX_BYTE_ACCOUNT)
        self.stranger = Key(nkeys.PREFIX_BYTE_ACCOUNT)
        self._user_prefix: int = nkeys.PREFIX_BYTE_USER
        self.jwt = self.key.sign(self.key, "test-operator", {"type": "operator"})
        self.account_jwt = self.key.sign(
            self.account,
            "app",
            {
                "type": "account",
                "limits": _UNLIMITED_ACCOUNT,
                "default_permissions": {"pub": {}, "sub": {}},
            },
        )

    def config(self) -> str:
        """nats-server configuration lines: trust this operator, resolve its
        account from memory."""
        return (
            f"operator: {self.jwt}\n"
            "resolver: MEMORY\n"
            f"resolver_preload: {{ {self.account.public}: {self.account_jwt} }}\n"
        )

    def creds(self, path: Path, *, account: Key | None = None) -> Path:
        """A ``.creds`` file (mode 0600) for a new user of ``account`` (the
        trusted one unless given)."""
        issuer = account or self.account
        user = Key(self._user_prefix)
        jwt = issuer.sign(
            user,
            path.stem,
            {"type": "user", "pub": {}, "sub": {}, **_UNLIMITED_USER},
        )
        path.write_text(
            "-----BEGIN NATS USER JWT-----\n"
            f"{jwt}\n"
            "------END NATS USER JWT------\n\n"
            "************************* IMPORTANT *************************\n"
            "NKEY Seed printed below can be used to sign and prove identity.\n\n"
            "-----BEGIN USER NKEY SEED-----\n"
            f"{user.seed.decode()}\n"
            "------END USER NKEY SEED------\n"
        )
        path.chmod(0o600)
        return path
