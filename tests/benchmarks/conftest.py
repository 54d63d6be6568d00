"""The benchmark harness is not installed: make the checkout's ``benchmarks``
importable however pytest was started (``python -m pytest`` already puts the
current directory on ``sys.path``; bare ``pytest`` does not)."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
