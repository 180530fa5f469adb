"""Where a reply's Markdown is cut for the window: into pieces that stay put while it grows,
so the chat view renders only the last piece again (ui/chat_turns.py). A view concern, kept
out of core/chat, which holds the protocol and the conversation as data."""

from __future__ import annotations


def markdown_segments(text: str, size: int = 1500) -> list[str]:
    """`text` cut at blank lines outside code fences into pieces of about `size` characters.

    The cuts depend only on what comes before them, so while a reply grows every piece but
    the last stays the same: the window renders only the last one again.
    """
    out: list[str] = []
    start = 0
    pos = 0
    fences = 0
    while True:
        cut = text.find("\n\n", pos)
        if cut < 0:
            break
        fences += text.count("```", pos, cut)
        pos = cut + 2
        if fences % 2 == 0 and cut - start >= size:
            out.append(text[start:cut])
            start = pos
    out.append(text[start:])
    return out
