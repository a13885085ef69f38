"""The Lua scripts the Redis layer runs on the server, by the side that runs them."""

__all__: list[str] = []
