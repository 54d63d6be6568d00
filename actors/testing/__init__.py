"""Testing actors: probes, a synchronous behaviour kit, manual time, helpers.

The pytest plugin (``actors.testing.plugin``, loaded by pytest through the
``pytest11`` entry point) adds fixtures on top of these: ``actor_system``,
``probe``, ``probe_factory``, ``dead_letters``, ``settle``, ``manual_time``,
``nats_server``, ``cluster``. Importing ``actors.testing`` does not import
pytest. ``NatsServer`` (the ``nats_server`` fixture's class, from
``actors.nats``) starts more servers, with options.
"""

from .._clock import Clock as Clock
from ..channel.lowlevel import publish as _publish
from ..nats import NatsServer as NatsServer
from ._behavior import AskStarted as AskStarted
from ._behavior import BehaviorTestKit as BehaviorTestKit
from ._behavior import Effect as Effect
from ._behavior import ReceiveTimeoutSet as ReceiveTimeoutSet
from ._behavior import Spawned as Spawned
from ._behavior import SpawnedPool as SpawnedPool
from ._behavior import Stopped as Stopped
from ._behavior import TimerCancelled as TimerCancelled
from ._behavior import TimerStarted as TimerStarted
from ._behavior import Unwatched as Unwatched
from ._behavior import Watched as Watched
from ._behavior import WorkStarted as WorkStarted
from ._blocked import wait_all_blocked as wait_all_blocked
from ._dead_letter_log import DeadLetterLog as DeadLetterLog
from ._inbox import TestInbox as TestInbox
from ._manual_clock import ManualClock as ManualClock
from ._probe import TestProbe as TestProbe
from ._probe import await_assert as await_assert
from ._settle import busy_actors as busy_actors
from ._settle import settle as settle
from ._timefactor import dilated as dilated
from ._timefactor import set_time_factor as set_time_factor
from ._timefactor import time_factor as time_factor

__all__ = [
    "AskStarted",
    "BehaviorTestKit",
    "Clock",
    "DeadLetterLog",
    "Effect",
    "ManualClock",
    "NatsServer",
    "ReceiveTimeoutSet",
    "Spawned",
    "SpawnedPool",
    "Stopped",
    "TestInbox",
    "TestProbe",
    "TimerCancelled",
    "TimerStarted",
    "Unwatched",
    "Watched",
    "WorkStarted",
    "await_assert",
    "busy_actors",
    "dilated",
    "set_time_factor",
    "settle",
    "time_factor",
    "wait_all_blocked",
]

# Public names report this package as their module (see actors.channel.lowlevel).
_publish(globals())
