"""The worker: one `Worker` and the parts it owns (intake, deliveries, watching, the
writer)."""

__all__: list[str] = []
