"""Built-in plug-ins. Each registers a click group under the entry-point group
``shuffle_accountant.plugins`` in ``pyproject.toml``, exactly as a third party would."""
