"""The mailbox layer: quota-counted messages, uncounted signals, drain-many.

Built on the channel core's buffer and waiting primitives; it knows nothing of
actors. See [``Mailbox``][actors.mailbox.Mailbox].
"""

from anyio import WouldBlock as WouldBlock

from ..channel.lowlevel import publish as _publish
from ._errors import EndOfMailbox as EndOfMailbox
from ._errors import MailboxClosed as MailboxClosed
from ._errors import MailboxFull as MailboxFull
from ._mailbox import Mailbox as Mailbox
from ._mailbox import MailboxStatistics as MailboxStatistics
from ._quota import check_capacity as check_capacity
from ._signal import SIGNAL_CLASSES as SIGNAL_CLASSES
from ._signal import Signal as Signal

__all__ = [
    "SIGNAL_CLASSES",
    "EndOfMailbox",
    "Mailbox",
    "MailboxClosed",
    "MailboxFull",
    "MailboxStatistics",
    "Signal",
    "WouldBlock",
    "check_capacity",
]

# Public names report this package as their module (see actors.channel.lowlevel).
_publish(globals())
