"""Shared pytest fixtures."""

from _postgres import postgres_db_url, postgres_url  # noqa: F401  (fixtures, used by name)
