"""Errors that point at the setting to fix."""

from __future__ import annotations

from draftwise.core.messages import Text


class FieldError(ValueError):
    """A user error; `field` names the setting to fix (model, draft, mtp, extra_args, port...),
    so the window can mark that field and the CLI can print the message alone.

    `message` is the sentence as data (the window translates it); `str(exc)` is its English."""

    def __init__(self, field_name: str, message: Text) -> None:
        super().__init__(str(message))
        self.field = field_name
        self.message: Text = message
