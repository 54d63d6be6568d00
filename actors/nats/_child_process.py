"""Child processes that never outlive this process, ``kill -9`` included.

On Linux the child asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``). Two traps, both avoided here:

- The "parent" the kernel watches is the *thread* that forked the child, not
  the process: a child started from a short-lived thread (an anyio worker
  thread, which idles out after seconds) would be killed when that thread
  ends. So every such child is forked by one daemon thread that lives as
  long as the process (and started again in a forked copy of it).
- ``preexec_fn`` runs Python code between ``fork`` and ``exec``, which can
  deadlock in a process with threads. So the child is a tiny launcher
  (``python -I -S -c``) that sets the signal on itself, checks that its
  parent is still this process (it may have died before the signal was
  set), and ``exec``s the program, which keeps the signal and the pid.

Elsewhere (macOS, Windows) there is no such kernel mechanism: the child is
started directly, and is stopped when its owner stops it and at interpreter
exit, but not after ``kill -9`` of this process. (A watchdog process would
be the portable way, at the price of one more process per child.)
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["popen_tied"]

#: The launcher: PR_SET_PDEATHSIG is 1; argv: [parent pid, program, *args].
_LAUNCHER = (
    "import ctypes,os,signal,sys\n"
    "libc=ctypes.CDLL(None,use_errno=True)\n"
    "if libc.prctl(1,signal.SIGKILL,0,0,0)!=0:\n"
    " sys.exit('prctl(PR_SET_PDEATHSIG) failed: errno %d'%ctypes.get_errno())\n"
    "if os.getppid()!=int(sys.argv[1]):sys.exit(1)\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n"
)

_Job = tuple[Callable[[], Any], "concurrent.futures.Future[Any]"]

_lock = threading.Lock()
_jobs: queue.SimpleQueue[_Job] | None = None
_owner = 0  # the pid whose forking thread _jobs feeds


def _fork_jobs(jobs: queue.SimpleQueue[_Job]) -> None:
    while True:
        call, future = jobs.get()
        try:
            future.set_result(call())
        except BaseException as exc:  # handed to the caller
            future.set_exception(exc)


def _in_forking_thread(call: Callable[[], Any]) -> Any:
    """Run ``call`` in the process's long-lived forking thread."""
    global _jobs, _owner
    with _lock:
        if _jobs is None or _owner != os.getpid():
            _jobs, _owner = queue.SimpleQueue(), os.getpid()
            threading.Thread(
                target=_fork_jobs, args=(_jobs,), name="actors-fork", daemon=True
            ).start()
        jobs = _jobs
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    jobs.put((call, future))
    return future.result()


def popen_tied(args: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **options)`` of a program that the kernel
    kills when this process dies (on Linux; see the module doc elsewhere).
    The child's pid is the program's (the launcher ``exec``s it).

    Raises:
        OSError: the launcher could not be started (as ``Popen``). A program
            that cannot be executed makes the child exit with status 1 and a
            traceback on its standard error.
    """
    if not sys.platform.startswith("linux"):
        return subprocess.Popen(list(args), **options)
    command = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *args]
    process: subprocess.Popen[bytes] = _in_forking_thread(
        lambda: subprocess.Popen(command, **options)
    )
    return process
