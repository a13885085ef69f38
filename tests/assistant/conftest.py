"""The assistant example is not installed: its tests import it as ``examples.assistant``
from the repository root, which this puts on ``sys.path`` before they are collected."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
