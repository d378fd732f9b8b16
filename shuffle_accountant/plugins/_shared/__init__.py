"""Code the built-in plug-ins share, kept neutral so that no plug-in imports another:
noise-law evaluation with measured error budgets (:mod:`.laws`) and the other small
pieces more than one plug-in needs. Not itself a plug-in (no entry point)."""
