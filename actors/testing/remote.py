"""Test helpers for remote actors (they need the ``remote`` extra):
[``Cluster``][actors.testing.remote.Cluster] (several systems joined as
nodes, the ``cluster`` fixture's class) and the fast failure detection of test
nodes, so a test that waits for ``NodeDown`` waits about half a second, not
the production defaults' several seconds::

    Remote(url, heartbeat_interval=FAST_HEARTBEAT_INTERVAL,
           failure_detector=fast_detector)
"""

from ._cluster import FAST_HEARTBEAT_INTERVAL as FAST_HEARTBEAT_INTERVAL
from ._cluster import Cluster as Cluster
from ._cluster import fast_detector as fast_detector

__all__ = ["FAST_HEARTBEAT_INTERVAL", "Cluster", "fast_detector"]
