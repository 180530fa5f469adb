"""Errors that point at the setting to fix."""

from __future__ import annotations


class FieldError(ValueError):
    """A user error; `field` names the setting to fix (model, draft, mtp, extra_args, port...),
    so the window can mark that field and the CLI can print the message alone."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
