"""The producer's side: `Mailboxes`, its handles and reply streams, control, reading
and the survey."""

__all__: list[str] = []
