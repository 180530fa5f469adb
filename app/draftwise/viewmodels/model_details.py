"""The chosen model in words: one headline, a few facts, and what is wrong with the file."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.gguf import reader as gguf
from draftwise.core.readable import human_bytes, human_ctx, human_params
from draftwise.core.speculation import tags
from draftwise.viewmodels.i18n import N_, tr

# Short words in the column; the tooltip says the rest ("… — not for chat").
CHAT_KIND, TEXT_KIND, DRAFT_KIND = N_("chat"), N_("continues text"), N_("helper")
KIND_TIPS = {
    CHAT_KIND: N_("A chat model: it answers what you ask"),
    TEXT_KIND: N_("Continues text — not for chat. This file has no chat template: it writes on "
                  "from what you type instead of answering it"),
    DRAFT_KIND: N_("A draft model: it helps a bigger model of its family answer faster; it is not "
                   "meant to be launched on its own"),
}



def display_name(info: gguf.ModelInfo | None, path: Path | None = None) -> str:
    """The file's own stem (what users see in their file manager), shards as one."""
    p = info.path if info is not None else path
    return gguf.shard_stem(p) if p is not None else ""


def mtp_badge(info: gguf.ModelInfo | None) -> str:
    if info is None:
        return ""
    if info.has_mtp_head:
        return "MTP"
    return ""


class ModelDetailsViewModel(QObject):
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path: Path | None = None
        self.info: gguf.ModelInfo | None = None
        self.error: str | None = None
        self.loading = False

    def set_loading(self, path: Path) -> None:
        self.path, self.info, self.error, self.loading = path, None, None, True
        self.changed.emit()

    def set_info(self, info: gguf.ModelInfo) -> None:
        self.path, self.info, self.error, self.loading = info.path, info, None, False
        self.changed.emit()

    def set_error(self, path: Path, error: str) -> None:
        self.path, self.info, self.error, self.loading = path, None, error, False
        self.changed.emit()

    def clear(self) -> None:
        self.path = self.info = self.error = None
        self.loading = False
        self.changed.emit()

    # ---------------------------------------------------------------- texts
    @property
    def has_model(self) -> bool:
        return self.info is not None

    def title(self) -> str:
        if self.path is None:
            return tr("No model chosen")
        return display_name(self.info, self.path)

    def subtitle(self) -> str:
        """"qwen3 · 8.2 B · 4.7 GB · 40k ctx" — the sketch's one-line summary."""
        if self.loading:
            return tr("Reading the model…")
        if self.error:
            return tr("This file cannot be used")
        i = self.info
        if i is None:
            return tr("Choose a model on the left, drop a .gguf file here, or press Ctrl+O.")
        parts = [i.architecture or "?", human_params(i.parameters)]
        if i.quant:
            parts.append(i.quant)
        parts.append(human_bytes(i.size_bytes))
        if i.context_length:
            parts.append(tr("{0} ctx").format(human_ctx(i.context_length)))
        return " · ".join(parts)

    def use_note(self) -> tuple[str, str]:
        """(words, tooltip) for a file that is not a chat model — a base model ("continues
        text — not for chat") or a draft model — else ("", "")."""
        i = self.info
        if i is None or self.loading or self.error:
            return "", ""
        if tags.is_drafter(i):
            return tr("helper — not meant to run on its own"), tr(KIND_TIPS[DRAFT_KIND])
        if not i.has_chat_template:
            return tr("continues text — not for chat"), tr(KIND_TIPS[TEXT_KIND])
        return "", ""

    def facts(self) -> list[tuple[str, str]]:
        i = self.info
        if i is None:
            return []
        out = [
            (tr("File"), str(i.path)),
            (tr("Architecture"), i.architecture or "?"),
            (tr("Parameters"), human_params(i.parameters)),
            (tr("Quantization"), i.quant or "?"),
            (tr("Size"), human_bytes(i.size_bytes) + (tr(" in {0} files").format(i.shards) if i.shards > 1 else "")),
            (tr("Layers"), str(i.block_count or "?")),
            (tr("Trained context"), tr("{0} tokens").format(f"{i.context_length:,}") if i.context_length else "?"),
        ]
        if i.expert_count:
            out.append((tr("Experts"), tr("{0} ({1} used per token)").format(i.expert_count, i.expert_used_count or "?")))
        if i.nextn_predict_layers:
            out.append((tr("MTP head"), tr("yes, built in") if i.mtp_head_present else tr("declared, but not in this file")))
        if i.sliding_window:
            out.append((tr("Sliding window"), tr("{0} tokens").format(f"{i.sliding_window:,}")))
        tok = i.tokenizer
        out.append((tr("Vocabulary"), f"{tok.model or '?'} · {tok.vocab_size or '?'}"))
        if i.projectors:
            out.append((tr("Vision"), ", ".join(p.name for p in i.projectors)))
        return out

    def problems(self) -> list[str]:
        if self.error:
            return [self.error]
        i = self.info
        if i is None:
            return []
        out = []
        if i.missing_shards:
            out.append(tr("Missing part(s): {0}. Download them into the same folder.").format(", ".join(i.missing_shards)))
        if i.is_projector:
            out.append(tr("This is a vision projector (mmproj), not a model; choose the model it belongs to."))
        elif i.sidecar_kind:
            out.append(tr("This file only helps another model draft tokens ({0}); choose the main model and it is found automatically.").format(i.sidecar_kind))
        return out
