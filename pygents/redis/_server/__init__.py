"""Throwaway Redis for tests, examples and benchmarks: one server, a local cluster."""

__all__: list[str] = []
