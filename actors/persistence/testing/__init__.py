"""Testing durable actors: the event-sourced test kit, and (in
``actors.persistence.testing.tck``) the contract tests every journal plugin
runs.

The pytest plugin ``actors.persistence.testing.plugin`` (loaded by pytest
through the ``pytest11`` entry point) adds the fixtures ``memory_journal``,
``sqlite_journal`` and ``event_sourced_kit``. Importing this package does not
import pytest.
"""

from ._kit import CommandResult as CommandResult
from ._kit import EventSourcedTestKit as EventSourcedTestKit
from ._kit import RestartResult as RestartResult

__all__ = ["CommandResult", "EventSourcedTestKit", "RestartResult"]
