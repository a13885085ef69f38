"""The version of the ``pygents`` distribution, written down once.

Hatchling reads it from here when building (``[tool.hatch.version]`` in pyproject),
and ``pygents``, ``pygents_otel`` and ``pygents_tui`` all re-export this same string,
so a release changes one line and the three packages cannot disagree.
"""

__version__ = "0.1.0"
