"""What is drafting, in words a person reads: "the draft model x.gguf with n-gram speculation".

The words are messages (translated at the edge). A measurement keeps them in its record as the
English they render to (`Measurement.what`, `sweep_record.Row.what`), so this module is one of
those whose templates `messages.from_english` recognises: a record's words are shown translated
(`words_of`), and an older record's English too.
"""

from __future__ import annotations

from draftwise.core.engines.spec_types import DRAFT_MTP, MODEL_DRAFTERS, split_types
from draftwise.core.messages import Message, Text, from_english, msg, stored_in_records

stored_in_records(__name__)


def drafting_words(spec_type: str | None, draft_name: str | None) -> Message:
    """The speculation a decision runs: its model drafter (the draft file, the MTP head, or
    the type) and whether an n-gram type drafts beside it."""
    types = split_types(spec_type)
    drafter = next((t for t in types if t in MODEL_DRAFTERS), None)
    ngram = any(t.startswith("ngram") for t in types)
    if drafter is None:
        return msg("n-gram speculation") if ngram else msg("{type} speculation", type=spec_type or "")
    if draft_name is not None:
        words = msg("the draft model {name}", name=draft_name)
    elif drafter == DRAFT_MTP:
        words = msg("the MTP head")
    else:
        words = msg("{type} speculation", type=drafter)
    return msg("{what} with n-gram speculation", what=words) if ngram else words


def words_of(stored: str) -> Text:
    """A record's English words as the message they were rendered from (the text as it is
    when no template gives it)."""
    return from_english(stored)
