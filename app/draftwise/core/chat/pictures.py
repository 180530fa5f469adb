"""Pictures in a chat with a vision model, as data (no Qt): what is sent, what is refused.

The pinned engine (tools/server/server-common.cpp, oaicompat_content_load_media) takes a
picture the OpenAI way: a user message whose `content` is a list of parts, the picture an
`{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}` part. It decodes
the bytes with stb_image (PNG, JPEG, BMP, GIF, ...); a picture it cannot read ends the request
with an error answer ("Failed to load image or audio file"), and a running engine without a
projector says "image input is not supported". Whether it sees at all is `/props` →
`modalities.vision` (server-context.cpp), read once the engine is ready.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from draftwise.core.messages import Message, msg
from draftwise.core.readable import human_bytes

# The largest picture file taken. The engine scales every picture down to its encoder's size
# (a few hundred pixels for Gemma 3), so a bigger file only makes the request (base64: 4/3 of
# the bytes) slower to send and decode; 10 MiB holds any photo from a phone.
MAX_BYTES = 10 * 1024 * 1024
# What the engine's stb_image reads as it is; other formats Qt reads are sent as PNG.
SENT_AS_IS = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp"}


@dataclass(frozen=True)
class Picture:
    """One attached picture: its bytes as they are sent, and their type."""

    name: str
    mime: str  # image/png, image/jpeg ...
    data: bytes

    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def part(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.data_uri()}}


def content(text: str, pictures: tuple[Picture, ...] | list[Picture]) -> str | list[dict[str, Any]]:
    """A user message's `content`: the text alone, or the pictures first and then the text
    (the order the OpenAI examples and the engine's web UI use)."""
    if not pictures:
        return text
    parts = [p.part() for p in pictures]
    if text:
        parts.append({"type": "text", "text": text})
    return parts


def vision_of_props(obj: Any) -> bool:
    """`/props` says the running engine sees pictures (a projector with a vision encoder)."""
    modalities = obj.get("modalities") if isinstance(obj, dict) else None
    return isinstance(modalities, dict) and modalities.get("vision") is True


# ------------------------------------------------------------------ refusals, one sentence each
def too_big(name: str, size: int) -> Message:
    return msg("{name} is too big to attach ({size}); pictures up to {limit} are taken. Make it smaller "
               "and attach it again.", name=name, size=human_bytes(size), limit=human_bytes(MAX_BYTES))


def not_an_image(name: str) -> Message:
    return msg("{name} is not a picture Draftwise can read; attach a PNG, JPEG, GIF, BMP or WebP file.",
               name=name)


def refused(error: str) -> Message:
    return msg("The engine could not use the picture ({error}); your message is kept: attach another "
               "picture or send it without one.", error=error)


def no_vision() -> Message:
    return msg("This model does not see pictures: it was launched without a vision projector (mmproj).")


_REFUSALS = ("failed to load image", "image input is not supported", "invalid uri-encoded base64",
             "invalid base64", "uri must be base64", "failed to process mtmd", "failed to tokenize")


def is_refusal(detail: str) -> bool:
    """The engine's error answer is about a picture (server-common.cpp's messages)."""
    low = detail.lower()
    return any(r in low for r in _REFUSALS)
