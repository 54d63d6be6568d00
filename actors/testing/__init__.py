"""Helpers for testing code that uses actors (and the channels beneath them)."""

from ._blocked import wait_all_blocked as wait_all_blocked

__all__ = ["wait_all_blocked"]
