"""Single source of the package version (kept in step with pyproject.toml)."""

__version__ = "0.1.0"
