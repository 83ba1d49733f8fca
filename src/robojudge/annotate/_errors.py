"""Errors of the annotation service; each maps to one HTTP status in the web app."""

from __future__ import annotations


class AnnotateError(ValueError):
    """Any refusal of the annotation service; the message says what and why."""


class StorageError(AnnotateError):
    """The database could not be read or written: a full disk, a server gone, a lock held too long
    (HTTP 503). The message names the database, for the server's log and the command line, never for a
    page an annotator sees.

    Attributes:
        disk_full: The disk holding the SQLite database is full.
    """

    def __init__(self, message: str, *, disk_full: bool = False) -> None:
        super().__init__(message)
        self.disk_full = disk_full


class NotFound(AnnotateError):
    """No such project, annotator, assignment, media or round (HTTP 404)."""


class Forbidden(AnnotateError):
    """The actor may not see or change this (HTTP 403)."""


class Conflict(AnnotateError):
    """The write is based on a stale version, or the task is already submitted (HTTP 409)."""


class InvalidLabel(AnnotateError):
    """A label value is missing, unknown or out of range (HTTP 422).

    Attributes:
        field: The offending field as a form name (``"pa"``, ``"checklist.goal_completion"``,
            ``"segments.2"``).
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field {field}: {message}")
        self.field = field


class UnreadableClipWarning(UserWarning):
    """A project was given items whose clip header cannot be read (no frame rate, no length): a truncated
    or damaged file an annotator's browser will likely be unable to play either."""
