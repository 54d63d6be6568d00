"""The node process: command line, serving, leaving on a signal."""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import ModuleType
from typing import Any, NoReturn, cast

import anyio

from .. import ActorRef, ActorSystem, AskTimeout, ClusterNotStarted
from ..extension import import_extra
from ..nats import AuthorizationError, NoServersError
from ..remote import DEFAULT_PREFIX, Remote
from ..remote.scaleout import (
    Hosted,
    Leave,
    check_secret,
    load_module,
    read_handoff,
    start_agent,
)
from ._options import add_arguments, client_options, read_secret_file

__all__ = ["App", "host", "load_app", "main", "run"]

#: What ``--app MODULE:ATTR`` names: called with the node's system once it
#: serves, it returns an async context manager that runs the application
#: (e.g. ``Sharding(system, ...)``) until the node leaves.
App = Callable[[ActorSystem], AbstractAsyncContextManager[object]]


def load_app(spec: str) -> App:
    """The application ``spec`` names: ``MODULE:ATTR``, ``MODULE`` as
    ``--module`` takes it (a name, a ``.py`` path, ``NAME=PATH``), ``ATTR``
    a callable of the module.

    Raises:
        ValueError: ``spec`` has no ``:ATTR``.
        ImportError, Exception: the module cannot be imported.
        AttributeError: the module has no ``ATTR``.
        TypeError: ``ATTR`` is not callable.
    """
    module_spec, sep, attr = spec.rpartition(":")
    if not (sep and module_spec and attr.isidentifier()):
        raise ValueError(f"an app is MODULE:ATTR (e.g. shop.app:serve), not {spec!r}")
    module, _ = load_module(module_spec)
    try:
        app = getattr(module, attr)
    except AttributeError:
        raise AttributeError(
            f"{spec}: module {module.__name__} has no {attr!r}"
        ) from None
    if not callable(app):
        raise TypeError(f"{spec}: {attr} is not callable but {app!r}")
    return cast(App, app)


logger = logging.getLogger("actors.node")


def host(
    system: ActorSystem, modules: Iterable[str | ModuleType] = ()
) -> ActorRef[Any]:
    """Make ``system`` (entered, with a remote layer) host actors for other
    nodes, as ``python -m actors.node`` does: the public top-level Actor
    classes of ``modules`` can be spawned on it (``system.remote.spawn``)
    and it takes part in pools across processes (``spawn_pool(nodes=...)``).

    Args:
        system: the system to make a worker node.
        modules: modules, or their names, or file paths (``name=path`` to
            import a file under a name), imported now.

    Returns:
        The ref of its node agent (``/user/node-agent``).

    Raises:
        TypeError: ``system`` has no remote layer, or a bad ``modules`` entry.
        ImportError, Exception: a module cannot be imported.
        SystemNotRunning: the system is not entered.
    """
    return start_agent(system, Hosted(modules))


async def _stdin_closed() -> None:
    """Return when standard input reaches end-of-file (its writer, the
    parent process, is gone), discarding what is read. Waits without a
    thread (a blocked reading thread would keep the process from exiting)."""
    fd = sys.stdin.fileno()
    while True:
        await anyio.wait_readable(fd)
        try:
            if not os.read(fd, 65536):
                return
        except BlockingIOError:
            continue
        except OSError:
            return


async def run(
    url: str | Sequence[str],
    *,
    system: str = "actors",
    name: str | None = None,
    modules: Sequence[str] = (),
    prefix: str = DEFAULT_PREFIX,
    grace: float = 10.0,
    exit_on_stdin_eof: bool = False,
    ready: Callable[[Remote], None] | None = None,
    stop: anyio.Event | None = None,
    client_options: Mapping[str, Any] | None = None,
    secret: bytes | Sequence[bytes] | None = None,
    apps: Sequence[App | str] = (),
    node_options: Mapping[str, Any] | None = None,
    rejoin: bool = True,
) -> None:
    """Run a node until SIGTERM or SIGINT (or ``stop`` is set, or with
    ``exit_on_stdin_eof`` standard input ends), then leave cleanly (what
    ``python -m actors.node`` does).

    A node whose cluster membership (``system.cluster``, run by an app's
    ``Sharding``) a peer declared down leaves and, with ``rejoin``, joins
    again at once as a new incarnation: a new system, its apps entered
    again, ``ready`` called again (Akka's rule: a downed member never comes
    back as itself, and its peers refuse that incarnation for
    ``gone_ttl``; Erlang's ``init:restart/0``, in the same process).

    Args:
        url: the NATS server URL(s) of the system to join.
        system: the system's name; name: this node's (default: random).
        modules: module names or file paths whose actor classes this node
            hosts (imported now; nothing else is ever imported for a peer).
        prefix: the subject prefix.
        grace: seconds the pool members have to finish their running jobs
            when the node leaves.
        exit_on_stdin_eof: also leave when standard input is closed (the
            parent process died).
        ready: called once the node serves (default: prints
            ``ready <node> <incarnation>`` to standard output).
        stop: an event that makes the node leave when set.
        client_options: options of the NATS client (credentials, TLS files,
            ...; see [``actors.nats.connect``][actors.nats.connect]).
        secret: the cluster secret (``Remote(secret=...)``: a key, or keys
            of which the first seals), or None (the trusted-broker mode).
        apps: applications the node runs (``--app``): each a callable, or
            the ``MODULE:ATTR`` naming one (see ``load_app``), called with
            the system once the node serves; the async context manager it
            returns is entered before the node reports ready (in order) and
            left when the node leaves, before its pools hand their work back
            (in reverse order).
        node_options: more ``Remote`` arguments (``share``, ``capacity``,
            ``window``, ``heartbeat_interval``, ``max_peers``, ``gone_ttl``,
            ``idle_timeout``, ``stop_timeout``: what ``spawn_pool`` hands its
            node processes).
        rejoin: join again as a new incarnation when declared down (see
            above); False: leave and return.

    Raises:
        ImportError, Exception: a module cannot be imported.
        NoServersError, OSError: the server cannot be reached.
        AuthorizationError: the server refused the credentials.
        TypeError / ValueError: a bad ``secret`` or node option (as
            ``Remote``'s).
    """
    hosted = Hosted(modules)
    factories = [load_app(app) if isinstance(app, str) else app for app in apps]
    while True:
        remote = Remote(
            url,
            system=system,
            node=name,
            prefix=prefix,
            client_options=client_options,
            secret=secret,
            **dict(node_options or {}),
        )
        downed = await _serve(
            remote, hosted, factories, grace, exit_on_stdin_eof, ready, stop
        )
        if not (downed and rejoin):
            return
        logger.warning(
            "node %s was declared down by a peer: it left and joins again as a "
            "new incarnation",
            downed,
        )


async def _serve(
    remote: Remote,
    hosted: Hosted,
    factories: Sequence[App],
    grace: float,
    exit_on_stdin_eof: bool,
    ready: Callable[[Remote], None] | None,
    stop: anyio.Event | None,
) -> str | None:
    """One incarnation of the node (``run``'s).

    Returns:
        None when it left as asked (a signal, ``stop``, end of input); the
        node's address (``node#incarnation``) when it left because a peer
        declared its cluster membership down.
    """
    downed: str | None = None
    # A job still running after the grace must not hold the leave: the
    # actors' tasks are cancelled after that long more (its pool runs it
    # again elsewhere: at-least-once).
    async with ActorSystem(remote=remote, shutdown_timeout=grace) as actors:
        agent = start_agent(actors, hosted)
        # The applications leave first, at the end of this block (sharding
        # hands its shards off), then the pools hand their work back.
        async with AsyncExitStack() as running:
            for factory in factories:
                await running.enter_async_context(factory(actors))
            if ready is None:
                address = remote.node
                print("ready", address.node, address.incarnation, flush=True)
            else:
                ready(remote)
            leave = anyio.Event()
            async with anyio.create_task_group() as tg:

                async def on_signal() -> None:
                    with anyio.open_signal_receiver(
                        signal.SIGTERM, signal.SIGINT
                    ) as signals:
                        async for _ in signals:
                            leave.set()
                            return

                async def on_eof() -> None:
                    await _stdin_closed()
                    leave.set()

                async def on_stop(stop: anyio.Event) -> None:
                    await stop.wait()
                    leave.set()

                async def on_downed(cluster: Any) -> None:
                    nonlocal downed
                    await cluster.wait_downed()
                    downed = str(remote.node)
                    leave.set()

                tg.start_soon(on_signal)
                if exit_on_stdin_eof:
                    tg.start_soon(on_eof)
                if stop is not None:
                    tg.start_soon(on_stop, stop)
                try:
                    cluster = actors.cluster
                except ClusterNotStarted:
                    pass  # no app runs a cluster membership
                else:
                    tg.start_soon(on_downed, cluster)
                await leave.wait()
                tg.cancel_scope.cancel()
        # Hand back and finish the pools' work, then leave the system.
        with anyio.move_on_after(grace + 2.0), anyio.CancelScope(shield=True):
            try:
                await agent.ask(Leave(grace), timeout=grace + 1.0)
            except AskTimeout:
                logger.warning(
                    "jobs still running after the grace of %s s: left "
                    "unreported (their pools run them again elsewhere)",
                    grace,
                )
    return downed


def main(argv: list[str]) -> None:
    """The command line (``python -m actors.node --help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m actors.node",
        description="A worker node: joins a system's NATS server and hosts actors.",
    )
    parser.add_argument(
        "--connect",
        action="append",
        metavar="URL",
        help="NATS server URL (repeat for a cluster); required",
    )
    parser.add_argument("--name", help="this node's name (default: random)")
    parser.add_argument(
        "--system", default="actors", help="the system's name (default: %(default)s)"
    )
    parser.add_argument(
        "--prefix", default=DEFAULT_PREFIX, help="subject prefix (default: %(default)s)"
    )
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module name, a .py path, or NAME=PATH (the file imported as "
        "NAME) whose actor classes this node hosts (repeat for more)",
    )
    parser.add_argument(
        "--app",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="an application to run on the node: ATTR of MODULE (as --module "
        "takes it) is called with the system and returns an async context "
        "manager, entered when the node serves and left when it leaves "
        "(repeat for more)",
    )
    parser.add_argument(
        "--grace",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="seconds to finish running jobs when leaving (default: %(default)s)",
    )
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="leave when standard input ends (parent gone)",
    )
    parser.add_argument(
        "--no-rejoin",
        action="store_true",
        help="exit when a peer declares this node down, instead of joining "
        "again at once as a new incarnation",
    )
    parser.add_argument(
        "--backend", choices=["asyncio", "uvloop", "trio"], default="asyncio"
    )
    parser.add_argument(
        "--share",
        type=int,
        metavar="N",
        help="tells outstanding per remote actor, and held per peer and actor "
        "(Remote(share=N); default 4096, or the parent's with --options-fd)",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    urls: list[str] | None = args.connect
    options = client_options(args, os.environ)
    secret: tuple[bytes, ...] | None = None
    if args.secret_file is not None:
        secret = read_secret_file(args.secret_file)
        try:
            check_secret(secret)
        except (TypeError, ValueError) as exc:
            parser.error(f"--secret-file {args.secret_file}: {exc}")
    if args.options_fd is not None:
        # From the parent (spawn_pool): its servers and client options; the
        # command line's own options win.
        try:
            handoff = read_handoff(args.options_fd)
        except (OSError, ValueError) as exc:
            parser.error(f"--options-fd {args.options_fd}: {exc}")
        urls = list(handoff.servers)
        options = {**handoff.client_options, **options}
        if secret is None and handoff.secret:
            secret = tuple(handoff.secret)
    node_options: dict[str, Any] = {}
    if args.options_fd is not None:
        node_options.update(handoff.node_options)
    if args.share is not None:
        node_options["share"] = args.share
    # Checked before the loop starts, each naming its option.
    for option, checked in (
        ("--system", {"system": args.system}),
        ("--name", {"node": args.name}),
        ("--prefix", {"prefix": args.prefix}),
        ("--options-fd" if args.options_fd is not None else "--share", node_options),
    ):
        try:
            Remote(None, **checked)
        except (TypeError, ValueError) as exc:
            parser.error(f"argument {option}: {exc}")
    if not urls:
        parser.error("the following arguments are required: --connect")
    try:
        # Imported now, outside the loop, so that one that cannot be is a
        # one-line error (run imports them again: from sys.modules).
        Hosted(args.module)
    except Exception as exc:  # whatever its import raised: one line, status 1
        fail(parser, f"--module: cannot import: {_one_line(exc)}")
    apps: list[App] = []
    for spec in args.app:
        try:
            apps.append(load_app(spec))
        except Exception as exc:  # the same for an application
            fail(parser, f"--app {spec}: {_one_line(exc)}")
    backend: str = args.backend
    backend_options: dict[str, Any] = {}
    if backend == "uvloop":
        uvloop = import_extra("uvloop", "uvloop", "--backend uvloop")
        backend, backend_options = "asyncio", {"loop_factory": uvloop.new_event_loop}
    try:
        anyio.run(
            lambda: run(
                urls,
                system=args.system,
                name=args.name,
                modules=args.module,
                prefix=args.prefix,
                grace=args.grace,
                exit_on_stdin_eof=args.exit_on_stdin_eof,
                client_options=options,
                secret=secret,
                apps=apps,
                node_options=node_options,
                rejoin=not args.no_rejoin,
            ),
            backend=backend,
            backend_options=backend_options,
        )
    except (NoServersError, AuthorizationError) as exc:
        message = str(exc)
        cause = exc.__cause__
        if cause is not None and str(cause) not in message:
            message = f"{message} ({cause})"
        fail(parser, f"--connect: {message}")


def _one_line(exc: BaseException) -> str:
    """``exc`` for a one-line error: its type where its text does not say
    what happened (``No module named 'x'`` does; ``division by zero`` is
    better as ``ZeroDivisionError: division by zero``)."""
    text = " ".join(str(exc).split())
    if isinstance(exc, (ImportError, OSError, AttributeError)) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def seconds(text: str) -> float:
    """An option's value as a finite number of seconds >= 0 (argparse's
    ``type``: its error names the option).

    Raises:
        argparse.ArgumentTypeError: it is not one.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds >= 0, not {text!r}"
        )
    return value


def fail(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Exit with status 1 and a one-line error: the arguments were good,
    running failed (a server that cannot be reached, a module that cannot
    be imported)."""
    parser.exit(1, f"{parser.prog}: error: {message}\n")
