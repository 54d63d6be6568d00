"""The node process's connection options: credentials and TLS from the
command line, secrets from files or the environment, never from the
command line itself (every user of the machine can read it with ``ps``).

* ``--creds FILE``: a NATS ``.creds`` file (user JWT and NKey seed).
* ``--nkey FILE``: a file holding an NKey user seed (``SU...``).
* ``--user NAME``: a user name; its password from the file
  ``--password-file`` or the environment variable ``ACTORS_NATS_PASSWORD``.
* ``--token-file FILE``: a file holding an authentication token.
* ``--tls-ca FILE``, ``--tls-cert FILE``, ``--tls-key FILE``: TLS with a
  private CA, and a client certificate for servers that verify clients.
* ``--options-fd N``: how ``spawn_pool(processes=N)`` hands a child its
  parent's options and secret (see ``actors.remote.scaleout``'s handoff).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["PASSWORD_ENV", "add_arguments", "client_options"]

#: The environment variable a ``--user``'s password is read from.
PASSWORD_ENV = "ACTORS_NATS_PASSWORD"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the connection options to the node's command line."""
    group = parser.add_argument_group(
        "credentials and TLS (secrets come from files or the environment)"
    )
    group.add_argument("--creds", metavar="FILE", help="a NATS .creds file")
    group.add_argument(
        "--nkey", metavar="FILE", help="a file holding an NKey user seed (SU...)"
    )
    group.add_argument(
        "--user",
        metavar="NAME",
        help=f"a user name; the password from --password-file or ${PASSWORD_ENV}",
    )
    group.add_argument(
        "--password-file", metavar="FILE", help="a file holding --user's password"
    )
    group.add_argument(
        "--token-file",
        metavar="FILE",
        help="a file holding an authentication token",
    )
    group.add_argument(
        "--tls-ca", metavar="FILE", help="PEM certificate authorities to trust"
    )
    group.add_argument(
        "--tls-cert", metavar="FILE", help="PEM client certificate (chain)"
    )
    group.add_argument(
        "--tls-key", metavar="FILE", help="PEM private key of --tls-cert"
    )
    group.add_argument(
        "--options-fd",
        type=int,
        metavar="N",
        help="read the connection options and secret from this inherited "
        "file descriptor (how spawn_pool(processes=N) starts nodes)",
    )


def _read_secret(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().strip()
    except OSError as exc:
        raise SystemExit(f"{what}: cannot read {path!r}: {exc}") from None
    except UnicodeDecodeError:
        raise SystemExit(f"{what}: {path!r} is not text") from None
    if not text:
        raise SystemExit(f"{what}: {path!r} is empty")
    return text


def client_options(
    args: argparse.Namespace, environ: dict[str, str] | os._Environ[str]
) -> dict[str, Any]:
    """The NATS client options of the parsed command line.

    Raises:
        SystemExit: a file cannot be read or is empty, ``--user`` has no
            password, ``--tls-key`` comes without ``--tls-cert``, or
            ``--creds`` and ``--nkey`` are both given (the message says which).
    """
    options: dict[str, Any] = {}
    if args.creds is not None and args.nkey is not None:
        raise SystemExit("give --creds or --nkey, not both")
    if args.creds is not None:
        if not os.path.isfile(args.creds):
            raise SystemExit(f"--creds: no file {args.creds!r}")
        options["creds_file"] = os.path.abspath(args.creds)
    if args.nkey is not None:
        options["nkey_seed"] = _read_secret(args.nkey, "--nkey").encode()
    if args.password_file is not None and args.user is None:
        raise SystemExit("--password-file needs --user")
    if args.user is not None:
        options["user"] = args.user
        if args.password_file is not None:
            options["password"] = _read_secret(args.password_file, "--password-file")
        elif environ.get(PASSWORD_ENV):
            options["password"] = environ[PASSWORD_ENV]
        else:
            raise SystemExit(
                f"--user {args.user}: give its password with --password-file "
                f"or the environment variable {PASSWORD_ENV} (never on the "
                "command line)"
            )
    if args.token_file is not None:
        options["token"] = _read_secret(args.token_file, "--token-file")
    if args.tls_key is not None and args.tls_cert is None:
        raise SystemExit("--tls-key needs --tls-cert")
    for option, key in (
        ("tls_ca", "tls_ca_file"),
        ("tls_cert", "tls_cert_file"),
        ("tls_key", "tls_key_file"),
    ):
        path = getattr(args, option)
        if path is not None:
            if not os.path.isfile(path):
                raise SystemExit(f"--{option.replace('_', '-')}: no file {path!r}")
            options[key] = os.path.abspath(path)
    return options
