"""A hub file's verdict (core/hub/judge.py) in the window's words: short words for the cells
of Get models' file table and its starters, the details in tooltips.

Nothing is decided here: the verdict is the launch session's plan of the file's own header,
laid out as a download lays it out (core/hub/judge.py); this only says it — the fit, the
context, the planned total, the speed here (core/hub/catalog.py's wording) and what drafts.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.core.hub import catalog
from draftwise.core.hub.files import Drafting, RemoteModel, display_name
from draftwise.core.hub.judge import HubVerdict
from draftwise.core.machine import speed
from draftwise.core.planning.plan_types import FITS, NO_FIT, PARTIAL
from draftwise.core.readable import human_bytes, human_ctx
from draftwise.viewmodels.i18n import N_, tr, tr_message

FIT_WORDS = {FITS: N_("Fits"), PARTIAL: N_("Fits partly on the graphics card"),
             NO_FIT: N_("Too big for this computer")}  # fmt: skip
FIT_TIPS = {
    FITS: N_("Planned from its header as if downloaded: it fits this computer with the context shown."),
    PARTIAL: N_("Planned from its header as if downloaded: part of it runs on the processor, so it runs, "
                "but slower."),
    NO_FIT: N_("Planned from its header as if downloaded: even its smallest context does not fit this "
               "computer's memory. Choose a smaller file."),
}
DRAFTING_WORDS = {
    Drafting.MTP: N_("Drafts itself"),
    Drafting.MTP_ASSISTANT: N_("Drafts with its MTP assistant"),
    Drafting.DRAFT: N_("Faster with its helper {name}"),
    Drafting.NGRAM: N_("Drafts from the text so far"),
    Drafting.NONE: N_("No drafter"),
}
DRAFTING_TIPS = {
    Drafting.MTP: N_("Its file holds an MTP head: it guesses its own next words and checks them, so replies "
                     "come faster with the same answers."),
    Drafting.MTP_ASSISTANT: N_("Its MTP assistant ({name}) comes with it and drafts for it: faster, same "
                               "answers."),
    Drafting.DRAFT: N_("A small model of the same family ({name}) comes with it, guesses the next words and "
                       "the model checks them: faster, same answers."),
    Drafting.NGRAM: N_("No drafter pairs with it; the engine drafts from words already in the conversation."),
    Drafting.NONE: N_("No drafter here pairs with it (or one would cost context): it runs on its own."),
}


@dataclass(frozen=True)
class Cell:
    text: str
    tip: str = ""


@dataclass(frozen=True)
class VerdictWords:
    """The cells of one judged file, or `error` ("Not judged: …") across them."""

    fit: Cell
    context: Cell
    planned: Cell
    speed: Cell
    drafting: Cell
    error: Cell | None = None

    @property
    def cells(self) -> tuple[Cell, ...]:
        return self.fit, self.context, self.planned, self.speed, self.drafting


def short_name(model: RemoteModel) -> str:
    return display_name(model).removesuffix(".gguf")


def speed_cell(estimate: speed.Estimate | None) -> Cell:
    """"about 12 tokens a second here" (catalog.speed_sentence's words, short), the details
    (where it runs, what a token is, how sure) in the tooltip."""
    if estimate is None:
        return Cell("")
    rate = catalog.rate_words(estimate.tokens_per_s)
    text = (tr("about {rate} tokens a second here") if estimate.readable
            else tr("slow: about {rate} tokens a second")).format(rate=rate)  # fmt: skip
    return Cell(text, " ".join(tr_message(m) for m in catalog.speed_details(estimate)))


def drafting_cell(v: HubVerdict) -> Cell:
    name = short_name(v.drafter_model) if v.drafter_model is not None else ""
    kind = v.speculation if v.speculation in DRAFTING_WORDS else Drafting.NONE
    if kind == Drafting.DRAFT and not name:
        kind = Drafting.NONE  # a draft decision names its file; without one nothing drafts
    text = tr(DRAFTING_WORDS[kind]).format(name=name)
    why = [tr(DRAFTING_TIPS[kind]).format(name=v.drafter_name or name)]
    why += [tr_message(w) for w in v.why]
    return Cell(text, "\n".join(why))


def fit_tip(v: HubVerdict) -> str:
    tip = tr(FIT_TIPS.get(v.fit_state, FIT_TIPS[NO_FIT]))
    if v.header_bytes:
        tip += "\n" + tr("Judged from its header: {read} read from the hub, of {size}.").format(
            read=human_bytes(v.header_bytes), size=human_bytes(v.model.size))
    return tip


def verdict_words(v: HubVerdict) -> VerdictWords:
    if v.error is not None:
        sentence = tr_message(v.error)
        cell = Cell(tr("Not judged: {why}").format(why=sentence), sentence)
        empty = Cell("")
        return VerdictWords(cell, empty, empty, empty, empty, error=cell)
    return VerdictWords(
        fit=Cell(tr(FIT_WORDS.get(v.fit_state, FIT_WORDS[NO_FIT])), fit_tip(v)),
        context=Cell(tr("{ctx} context").format(ctx=human_ctx(v.context)),
                     tr("The context the plan gives it here: {n} tokens the model can keep in mind at once.").format(
                         n=f"{v.context:,}")),
        planned=Cell(human_bytes(v.planned_bytes),
                     tr("What the plan uses in all: the weights, the context (KV cache), the compute buffers, "
                        "and the drafter and vision projector when they come with it.")),
        speed=speed_cell(v.estimate),
        drafting=drafting_cell(v),
    )  # fmt: skip


def pending_cell() -> Cell:
    return Cell(tr("Judging…"), tr("Reading its header from the hub (a few MB at most) to plan it as if it were "
                                   "downloaded."))


def helper_cell() -> Cell:
    return Cell(tr("Helper: runs beside a model"),
                tr("A drafter: it guesses a model's next words and cannot answer on its own. Get a model of "
                   "this repository; its helper comes with it."))


def verdict_line(v: HubVerdict) -> str:
    """A starter's last line: "Fits · 32k context · Drafts itself"."""
    w = verdict_words(v)
    if w.error is not None:
        return w.error.text
    return " · ".join((w.fit.text, w.context.text, w.drafting.text))


def drafter_offer_text(v: HubVerdict) -> str:
    """The "Get the draft model too" checkbox, naming what comes with the model."""
    d = v.drafter_model
    if d is None:
        return ""
    if v.speculation == Drafting.MTP_ASSISTANT:
        return tr("Get its MTP assistant too: {name} ({size}) — it drafts for the model: faster, same "
                  "answers.").format(name=d.name, size=human_bytes(d.size))
    return tr("Get the draft model too: {name} ({size}) — usually 1.5–2× faster, same answers.").format(
        name=d.name, size=human_bytes(d.size))
