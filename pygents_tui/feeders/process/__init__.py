"""The in-process feeder: a pygents subscriber (and the process's own spans) writing
into the store, for ``demo``, ``run`` and `Dashboard` in a program."""
