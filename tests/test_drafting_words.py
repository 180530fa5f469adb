"""What is drafting, in words: messages translated at the edge, kept in records as English and
recognised again (the real window in Japanese showed "n-gram speculationで 1.38×")."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from draftwise.core.measurements import measured
from draftwise.core.measurements.measured import Combination, Measurement
from draftwise.core.messages import Message
from draftwise.core.speculation.setup import Setup
from draftwise.core.speculation.words import drafting_words, words_of

TS = Path(__file__).resolve().parents[1] / "resources" / "i18n" / "draftwise_ja.ts"


@pytest.fixture(scope="module")
def japanese() -> dict[str, str]:
    root = ET.parse(TS).getroot()
    return {m.findtext("source"): m.findtext("translation") for m in root.iter("message")
            if m.findtext("translation")}


@pytest.mark.parametrize(("spec_type", "draft", "english"), [
    ("ngram-mod", None, "n-gram speculation"),
    ("ngram-simple,ngram-mod", None, "n-gram speculation"),
    ("draft-mtp", None, "the MTP head"),
    ("draft-simple", "x.gguf", "the draft model x.gguf"),
    ("ngram-mod,draft-simple", "x.gguf", "the draft model x.gguf with n-gram speculation"),
    ("draft-eagle3", None, "draft-eagle3 speculation"),
])
def test_the_words_are_messages_that_come_back_from_their_english(spec_type, draft, english, japanese):
    words = drafting_words(spec_type, draft)
    assert isinstance(words, Message) and str(words) == english  # what records keep, as before
    back = words_of(english)
    assert isinstance(back, Message) and back == words
    rendered = back.render(lambda t: japanese.get(t, t))
    assert "n-gram speculation" not in rendered and "the MTP head" not in rendered


def test_a_measurements_note_is_translated_whole(japanese):
    m = Measurement(Combination("m", "d", "e", "x"), "ngram-simple,ngram-mod", "n-gram speculation", 130.0, 92.0,
                    0.02, 0.9, 20.0, None, None, setup=Setup(ngram="ngram-simple", ngram_len=32, ngram2="ngram-mod",
                                                           ngram2_len=32))
    use = measured.decide(m, automatic=True)
    text = use.note.render(lambda t: japanese.get(t, t))
    assert "speculation" not in text and "n-gram 照合" in text, text
    assert str(use.note).startswith("measured 1.41× with n-gram speculation")
