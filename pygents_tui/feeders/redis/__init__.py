"""The Redis feeder: mailboxes and their workers, surveyed from Redis, written into the
store (Redis is the source of truth for its mailboxes)."""
