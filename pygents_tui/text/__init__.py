"""Rules for text that every role shares: cutting to a budget, showing control and
invisible characters visibly, a value's one-line preview, an error's summary, plural
counts, and Rich text that is never parsed as markup.

No Textual and no pygents_tui module outside this folder: the store, the feeders, the
receiver and the panels all cut and show text the same way.
"""
