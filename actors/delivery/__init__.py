"""Reliable delivery between actors, local or on other nodes: at-least-once
with sequence numbers, confirmations after the handler, resending,
deduplication at the consumer (effectively once) and flow control by
demand, as Akka Typed's Reliable Delivery.

* [``ProducerController``][actors.delivery.ProducerController] numbers the
  producer's messages, holds them until confirmed and resends them;
  ``send`` waits for the consumer's demand.
* [``ConsumerController``][actors.delivery.ConsumerController] hands each to
  the consumer actor as a [``Delivery``][actors.delivery.Delivery] (in
  batches through a local consumer's mailbox; the handler's return confirms
  it), once, in order, and asks for more.
* [``WorkQueue``][actors.delivery.WorkQueue] holds jobs (durable with a
  queue) pulled by [``WorkerController``][actors.delivery.WorkerController]
  workers on any nodes, as Akka's ``WorkPullingProducerController``.
* [``DurableProducerQueue``][actors.delivery.DurableProducerQueue] stores the
  unconfirmed messages in a journal (``actors.persistence``), so a producer
  process that dies resends them when it starts again.

The protocol's messages travel over ``actors.remote`` like any message
(registered on each node's codec when a controller is made); see
``_protocol``. It needs msgspec: ``pip install "anyio-actors[delivery]"``.
"""

from ..channel.lowlevel import publish as _publish
from ._consumer import ConsumerController as ConsumerController
from ._consumer_state import ConsumerStatistics as ConsumerStatistics
from ._delivery import Delivery as Delivery
from ._durable_queue import DurableProducerQueue as DurableProducerQueue
from ._durable_queue import LoadedState as LoadedState
from ._errors import DeliveryError as DeliveryError
from ._errors import ProducerFailed as ProducerFailed
from ._errors import ProducerStopped as ProducerStopped
from ._errors import ProducerSystemExited as ProducerSystemExited
from ._producer import ProducerController as ProducerController
from ._producer import ProducerStatistics as ProducerStatistics
from ._work_queue import WorkQueue as WorkQueue
from ._work_queue import WorkQueueStatistics as WorkQueueStatistics
from ._worker import WorkerController as WorkerController

__all__ = [
    "ConsumerController",
    "ConsumerStatistics",
    "Delivery",
    "DeliveryError",
    "DurableProducerQueue",
    "LoadedState",
    "ProducerController",
    "ProducerFailed",
    "ProducerStatistics",
    "ProducerStopped",
    "ProducerSystemExited",
    "WorkQueue",
    "WorkQueueStatistics",
    "WorkerController",
]

_publish(globals())
