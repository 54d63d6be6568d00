"""anyio-actors: an actor runtime on anyio (asyncio, uvloop and Trio).

Define an [``Actor``][actors.Actor], ``spawn`` it in an
[``ActorSystem``][actors.ActorSystem], and talk to it through its
[``ActorRef``][actors.ActorRef] with ``tell``, ``send`` and ``ask``.
"""

from ._actor import Actor as Actor
from ._context import ActorContext as ActorContext
from ._dead_letters import DeadLetter as DeadLetter
from ._dead_letters import DeadLetters as DeadLetters
from ._dead_letters import DeadLetterStream as DeadLetterStream
from ._dead_letters import DeadLetterSubscription as DeadLetterSubscription
from ._errors import ActorNotFound as ActorNotFound
from ._errors import ActorStopped as ActorStopped
from ._errors import AskSelfError as AskSelfError
from ._errors import AskTimeout as AskTimeout
from ._errors import ClusterNotStarted as ClusterNotStarted
from ._errors import MailboxClosed as MailboxClosed
from ._errors import MailboxFull as MailboxFull
from ._errors import StashOverflow as StashOverflow
from ._errors import StrayCancellation as StrayCancellation
from ._errors import SystemNotRunning as SystemNotRunning
from ._errors import UnhandledMessage as UnhandledMessage
from ._lifecycle import ExitReason as ExitReason
from ._lifecycle import StopReason as StopReason
from ._log import FailureLogging as FailureLogging
from ._pipe import Result as Result
from ._pool import PoolRef as PoolRef
from ._pool import Routing as Routing
from ._receive_timeout import ReceiveTimeout as ReceiveTimeout
from ._ref import ActorRef as ActorRef
from ._ref import RefStatistics as RefStatistics
from ._ref import ReplyTypeMismatch as ReplyTypeMismatch
from ._replies import ErrorReply as ErrorReply
from ._request import Request as Request
from ._strategies import Backoff as Backoff
from ._strategies import Directive as Directive
from ._strategies import OneForAll as OneForAll
from ._strategies import OneForOne as OneForOne
from ._strategies import RestartType as RestartType
from ._strategies import RestForOne as RestForOne
from ._strategies import SupervisorStrategy as SupervisorStrategy
from ._system import DEFAULT_DRAIN as DEFAULT_DRAIN
from ._system import ActorSystem as ActorSystem
from ._system_signals import Terminated as Terminated
from ._telemetry import Telemetry as Telemetry
from ._threads import FromThread as FromThread
from ._timers import TimerScheduler as TimerScheduler
from .channel.lowlevel import publish as _publish

__all__ = [
    "DEFAULT_DRAIN",
    "Actor",
    "ActorContext",
    "ActorRef",
    "ActorStopped",
    "ActorSystem",
    "AskSelfError",
    "AskTimeout",
    "ClusterNotStarted",
    "Backoff",
    "DeadLetter",
    "DeadLetterStream",
    "DeadLetterSubscription",
    "DeadLetters",
    "Directive",
    "ExitReason",
    "FromThread",
    "MailboxClosed",
    "MailboxFull",
    "OneForAll",
    "OneForOne",
    "PoolRef",
    "ReplyTypeMismatch",
    "RestForOne",
    "RestartType",
    "Routing",
    "Request",
    "Result",
    "ActorNotFound",
    "FailureLogging",
    "RefStatistics",
    "StopReason",
    "StrayCancellation",
    "SupervisorStrategy",
    "SystemNotRunning",
    "Telemetry",
    "Terminated",
    "TimerScheduler",
    "UnhandledMessage",
    "ErrorReply",
    "ReceiveTimeout",
    "StashOverflow",
]

# Public names report this package as their module (see actors.channel.lowlevel).
_publish(globals())
