"""pygents benchmarks: ``uv run python -m benchmarks`` (``--quick``, ``--profile``)."""
