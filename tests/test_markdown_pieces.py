"""How a reply's Markdown is cut into pieces for the chat view (viewmodels/markdown_pieces.py)."""

from __future__ import annotations

from draftwise.viewmodels.markdown_pieces import markdown_segments


def test_markdown_pieces_of_a_growing_reply_stay_put():
    text = "".join((f"Paragraph {i} " + "word " * 80 + "\n\n") if i % 5 else "```python\nx = 1\n\ny = 2\n```\n\n"
                   for i in range(40))
    whole = markdown_segments(text, size=500)
    assert "\n\n".join(whole) == text and len(whole) > 4
    assert all(p.count("```") % 2 == 0 for p in whole[:-1])  # never cut inside a code block
    previous: list[str] = []
    for n in range(1, len(text), 53):
        pieces = markdown_segments(text[:n], size=500)
        assert pieces[:len(previous) - 1] == previous[:-1]  # only the last piece changes
        previous = pieces
