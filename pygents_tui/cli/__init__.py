"""``pygents-tui``: the command line — its commands (`demo`, `run`, `listen`,
`replay`), arguments and config file, the ``--web`` server, the terminal checks, and
the one place where a feeder, a store and the app are put together.

The one folder allowed to import every other; nothing imports it but the package's
entry points (``pygents_tui.__init__`` for the terminal check).
"""
