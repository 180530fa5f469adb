"""Core sentences in the user's language.

The core (resolver, planner, crash, launch flow, launch settings) is pure Python and speaks
English. This catalog turns its sentences into the window's language for display: each entry
is an English template whose `{name}` parts vary (file names, numbers, flags, sub-phrases);
the template becomes a regex over the whole sentence and, translated with `tr()`, the text
shown. Variable parts that are themselves core phrases (a skip reason, a crash sentence inside
the fallback reason) are translated too. A sentence no entry matches, or whose entry has no
translation, is shown as it is: nothing is ever lost, and English stays byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from draftwise.viewmodels.i18n import N_, tr

_FIELD = re.compile(r"\{(\w+)\}")


def _compile(template: str) -> re.Pattern[str]:
    out, seen, pos = [], set(), 0
    for m in _FIELD.finditer(template):
        out.append(re.escape(template[pos:m.start()]))
        name = m.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out), re.DOTALL)


def _catalog(templates: Iterable[str]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((_compile(t), t) for t in templates)


# Whole sentences, the most specific first.
SENTENCES = _catalog((
    # ---- resolver: notes
    N_("MTP head found in the model: speculation is on."),
    N_("MTP head found beside the model in {name}: speculation is on."),
    N_("Draft model found beside the model: {name} ({kind}). Speculation is on."),
    N_("Also suitable, not chosen: {names}."),
    N_("No drafter found: n-gram speculation is on (no extra memory)."),
    N_("No drafter found: starting without speculation."),
    N_("The model has an MTP head, but this engine does not run MTP for {arch} models; "
       "looking for a draft model instead."),
    N_("The model's MTP head made this engine fail before; it is left out."),
    N_("The model declares an MTP head but this file does not contain it."),
    N_("N-gram speculation made this engine fail before with this model; it is left out."),
    N_("Could not look for draft models in {folder}: {error}."),
    N_("Skipped {name}: {reason}."),
    N_("Speculation is off, as you chose."),
    N_("Speculative decoding is set up only for llama.cpp; {backend} runs without it."),
    N_("Your own --spec-type {type} is used; automatic detection was skipped."),
    N_("The draft model {name} is passed to the engine."),
    N_("Using your draft model {name} ({kind})."),
    N_("--split-mode tensor together with speculative decoding crashes some engines; "
       "if the engine fails to start, remove one of them."),
    # ---- resolver: errors
    N_("Extra engine arguments may not set the model ({flag}); choose the model in the Model field."),
    N_("Extra engine arguments may not set the draft model ({flag}); use the Draft model field."),
    N_("MTP mode must be 'auto' or 'off', not {value}."),
    N_("A draft model works only with llama.cpp, not {backend}; clear the Draft model field or choose llama.cpp."),
    N_("MTP on/off applies only to llama.cpp; {backend} decides speculation itself. Set MTP to auto."),
    N_("Speculation is off but a draft model is set; clear the Draft model field or set MTP to auto."),
    N_("--spec-type needs a value, e.g. --spec-type draft-simple."),
    N_("This engine has no speculative type {type}; it knows {known}."),
    N_("{name} is the MTP head of a {draft_arch} model; it drafts only for that model, not for this {arch} model."),
    N_("{name} is an MTP head for {draft_arch}, which this engine does not run."),
    N_("This engine cannot run a {kind} (--spec-type {type}); update the engine."),
    N_("The draft model {path} does not exist; choose the file again."),
    N_("The draft model {path} is a folder; choose a .gguf file inside it."),
    N_("{name} is the model itself; choose a smaller draft model."),
    N_("The draft model cannot be used: {error}"),
    N_("{name} does not share the model's vocabulary: its {difference} differs. "
       "A draft must come from the same model family."),
    # ---- prepare
    N_("{name} is a drafter ({kind}), not a model to run; choose the full model, and put this file "
       "in the Draft model field or beside the model."),
    N_("{name}: missing part(s) {parts}; download them into the same folder."),
    # ---- planner
    N_("{gpu} is left out: only {free} of it is free."),
    N_("KV cache {kv} does not work with this model: its attention heads hold {sizes} values, "
       "not a multiple of 32. Set the KV cache to Auto or f16."),
    N_("The context of {want} is above the {trained} this model was trained for; answers may degrade past that."),
    N_("One slot instead of {slots}: {slots} parallel conversations would not fit in {where}."),
    N_("One slot instead of {slots}: more would not fit in {where}."),
    N_("One slot instead of {slots}: more would not fit."),
    N_("The KV cache is stored as {kv} instead of {kv0} so the {ctx} context fits in {where}."),
    N_("The KV cache is stored as {kv} instead of {kv0} to fit in memory."),
    N_("The context is {ctx} instead of {want} with a {kv} KV cache: that is what fits in {where}."),
    N_("The context is {ctx} instead of {want}: that is what fits in {where}."),
    N_("The experts of {n} of {blocks} layers stay in RAM (the model does not fit on the GPU even "
       "with the smallest context); the rest runs on the GPU."),
    N_("The model runs on the CPU: not even one layer fits on the GPU next to the context."),
    N_("{on_gpu} of {blocks} layers run on the GPU and the rest on the CPU (slower): the model does "
       "not fit on the GPU even with the smallest context."),
    N_("The experts of {n} layers stay in RAM."),
    N_("MTP runs with one slot: more were unreliable in this engine."),
    N_("The {drafter} was left out: with it, the model would not fit at all."),
    N_("The {drafter} was left out: with it, the context would shrink from {ctx0} to {ctx}."),
    N_("The {drafter} was left out: with it, the KV cache would drop from {kv0} to {kv}."),
    N_("The {drafter} was left out: with it, only {slots} slot instead of {slots0} would fit."),
    N_("The {drafter} was left out: with it, part of the model would have to leave the GPU."),
    N_("The {drafter} stays because you chose it, although the model would not fit at all."),
    N_("The {drafter} stays because you chose it, although the context would shrink from {ctx0} to {ctx}."),
    N_("The {drafter} stays because you chose it, although the KV cache would drop from {kv0} to {kv}."),
    N_("The {drafter} stays because you chose it, although only {slots} slot instead of {slots0} would fit."),
    N_("The {drafter} stays because you chose it, although part of the model would have to leave the GPU."),
    N_("The weights are estimated from the file size: the tensor table could not be read."),
    N_("The recurrent state size is not in this file's metadata."),
    N_("It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and "
       "{have} of {where} is free. To run it, close other apps to free about {short} or pick a smaller "
       "quantization of this model (one under about {weights})."),
    N_("It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and "
       "{have} of {where} is free. To run it, close other apps to free about {short}."),
    # ---- crash: causes
    N_("The engine cannot start: the shared library {name} is missing."),
    N_("The engine could not listen on {where}: another program uses it."),
    N_("The model's MTP head is incomplete (its tensors were stripped), so the engine crashed building the MTP graph."),
    N_("The engine was asked to run MTP, but this model has no MTP layers it can use."),
    N_("The engine could not load the draft model {name} because memory ran out."),
    N_("The engine could not load the draft model {name} ({detail})."),
    N_("The engine could not load the draft model {name}."),
    N_("The model file is inconsistent: its metadata declares more tensors than it holds."),
    N_("The compressed KV cache ({kv}) does not fit this model's attention heads."),
    N_("The compressed KV cache does not fit this model's attention heads."),
    N_("The engine ran out of {where} while loading."),
    N_("The engine stopped on an internal check ({what})."),
    N_("The engine stopped on an internal check."),
    N_("The engine could not load the model: {why}."),
    N_("The engine ended for an unknown reason."),
    N_("The engine uses processor instructions this computer lacks (illegal instruction)."),
    N_("The engine cannot start: a library it needs is missing."),
    N_("The engine was killed from outside (by another program, or by the system when memory ran out)."),
    N_("The engine crashed (segmentation fault)."),
    N_("The engine exited on its own."),
    N_("The engine stopped unexpectedly ({status}): {last}."),
    N_("The engine stopped unexpectedly ({status})."),
    N_("The engine {program} could not be started: {reason}."),
    # ---- crash: next steps
    N_("Install the engine's runtime (GPU driver or toolkit), or reinstall the engine with "
       "`draftwise engine install --force`."),
    N_("Choose another port, or stop the program that uses it."),
    N_("Start without speculation (MTP off), or use a file that includes the MTP head."),
    N_("Choose another draft model from the same family, or start without one."),
    N_("Download the model again, or a different quantization of it."),
    N_("Set the KV cache back to Auto (or f16) and start again."),
    N_("Use a smaller context, fewer GPU layers, a smaller quantization, or close other programs that use the GPU."),
    N_("This is an engine bug or an unusual model; try without extra engine arguments, or update the engine."),
    N_("Check that the file is a complete GGUF model (download it again if unsure)."),
    N_("Look at the log for details."),
    N_("Install the portable CPU build of the engine (`draftwise engine install --force`)."),
    N_("Install the engine's runtime (GPU driver or toolkit), or reinstall the engine."),
    N_("If memory is short, use a smaller context or model; then start it again."),
    N_("Check that the model file is a complete model and not a drafter or MTP-only file; "
       "try without extra engine arguments."),
    N_("Start it again; look at the log if it keeps exiting."),
    N_("Try without speculation or extra engine arguments; the log has the details."),
    N_("Try without extra engine arguments; the log has the details."),
    N_("Install the engine with `draftwise engine install`, or choose the llama-server file again."),
    # ---- crash: running, but not as meant
    N_("The draft model's vocabulary does not match the model's: the engine serves without speculation "
       "although it was asked for it. Choose a draft model from the same family."),
    N_("This is a {backend} build but the engine runs on the CPU ({failure}): it is much slower. "
       "Check the GPU driver, or choose which GPUs to use."),
    N_("This is a {backend} build but the engine runs on the CPU: it is much slower. "
       "Check the GPU driver, or choose which GPUs to use."),
    # ---- launch flow: fallback and notices
    N_("The engine failed to start with {what} ({cause}); starting it again without speculation."),
    N_("Could not remember the broken drafter ({error}); the next launch will try it again."),
    N_("The engine started without {what}, so it will be left out from now on."),
    # ---- launch settings
    N_("GPU {index} ({name}) has no kernels in this engine build; it is left out."),
    N_("GPU {index} ({name}) has no kernels in this engine build; it is hidden from the engine."),
    N_("The integrated GPU {index} ({name}) is hidden: the dedicated GPU is faster and the pair often fails to start."),
    N_("This engine build has kernels for none of these GPUs; install a build for them."),
    N_("GPU {index} ({target}) needs a different gfx override than GPU {other}; it is hidden."),
    N_("Port {port} is not a TCP port; choose one between 1 and 65535."),
    N_("Port {port} is in use by another program; choose another port or stop that program."),
    N_("Port {port} is in use; the engine listens on {other} instead."),
    N_("The engine accepts connections from other computers on port {port}. "
       "Anyone on your network who has the API key can use it; keep the key private."),
    N_("Other computers reach it at {urls}."),
    N_("Speculative settings are for llama.cpp; {kind} decides speculation itself."),
    N_("Extra engine arguments may not contain {flag}. {why}"),
    N_("Use the network setting instead of --host."),
    N_("Use the Port field instead of --port."),
    N_("Keys on the command line are visible to every user (ps); Draftwise passes its key in the environment."),
    N_("An engine open to the network needs an API key; leave the key field to Draftwise or enter one."),
    N_("An engine open to the network needs an API key."),
    N_("mlx-lm's server has no API key, so Draftwise keeps it on this computer only."),
    N_("mlx-lm sizes its context itself; the context setting is not passed on."),
    # ---- launch request: planner-owned extra arguments, the engine's config files (last:
    # several start with a bare {flag})
    N_("Draftwise splits the model across GPUs by their free memory; remove {flag}."),
    N_("Draftwise places the model's tensors itself and cannot plan {flag}; remove it "
       "(use -ngl or --n-cpu-moe to keep part of the model off the GPU)."),
    N_("Draftwise cannot plan {flag}; remove it (use -ngl to keep layers off the GPU)."),
    N_("Draftwise keeps the KV cache beside the layers it belongs to and cannot plan {flag}; remove it."),
    N_("Draftwise plans one KV cache per slot and cannot plan {flag}; remove it."),
    N_("Draftwise decides the GPU offload itself and sets --fit; remove {flag} "
       "(use -ngl or --n-cpu-moe to fix the split yourself)."),
    N_("Draftwise sets the memory left free on each GPU (--fit-target); remove {flag}."),
    N_("Draftwise plans the context itself; remove {flag} and use the Context field (--ctx)."),
    N_("Draftwise shows the memory plan itself; remove {flag}."),
    N_("The drafter's KV cache follows the KV cache field; remove {flag} and use the KV cache field (--kv)."),
    N_("Draftwise places the draft model with the main model; remove {flag}."),
    N_("-ctk {k} and -ctv {v} differ: Draftwise gives the K and V caches one type. "
       "Use the KV cache field (--kv)."),
    N_("--cpu-moe and {flag} {n} both set where the experts go; keep one."),
    N_("The engine command would set {flags} twice; remove it from the extra arguments."),
    N_("{path} exists: llama.cpp applies it to every launch before the command line, so any setting "
       "in it that Draftwise does not set itself changes what runs. Remove it or empty it."),
    N_("{flag} alone cannot be planned: Draftwise gives the K and V caches one type. "
       "Use the KV cache field (--kv), or give {missing} the same type."),
    N_("{flag} {given} in the extra arguments and {planned} in the {field} field disagree; clear one of them."),
    N_("{flag} is given twice with different values ({a} and {b}); keep one."),
    N_("{flag} {value} is not a KV cache type; use one of {known}."),
    N_("{flag} needs a whole number, not '{value}'."),
    N_("{flag} takes on, off or auto, not '{value}'."),
    N_("{flag} must be at least {least}."),
))

# Parts of sentences: reasons, places, kinds of drafter.
PHRASES = _catalog((
    N_("it is not a readable GGUF file"),
    N_("it made this engine fail before"),
    N_("it carries its own MTP head, so it is a model, not a drafter"),
    N_("it is an MTP head for a model without its own head, and this model does not need it"),
    N_("it is an MTP head for {draft_arch}, not {arch}"),
    N_("this engine does not run MTP for {arch}"),
    N_("its architecture ({draft_arch}) differs from the model's ({arch})"),
    N_("this engine cannot run a {kind}"),
    N_("its vocabulary differs ({difference})"),
    N_("{field} ({draft} in the draft, {model} in the model)"),
    N_("token list (same size, different tokens)"),
    N_("{device} GPU memory"),
    N_("port {port}"),
    N_("killed by {signal}"),
    N_("exit code {code}"),
    N_("{type} speculation"),
))

WORDS = frozenset((
    N_("MTP head"), N_("draft model"), N_("EAGLE-3 drafter"), N_("DFlash drafter"), N_("DSpark drafter"),
    N_("tokenizer model"), N_("vocabulary size"), N_("BOS token id"), N_("EOS token id"),
    N_("the GPU"), N_("memory"), N_("the GPU's share of memory"), N_("RAM"),
    N_("GPU memory and RAM together"), N_("the memory the GPU may use"), N_("system memory (RAM)"),
    N_("its port"), N_("a library"), N_("the draft model"), N_("the model's MTP head"),
))


def _fill(template: str, m: re.Match[str]) -> str | None:
    """The translated template with the parts filled in, or None when it has no translation."""
    text = tr(template)
    if text == template:
        return None
    parts = {k: _part(v) for k, v in m.groupdict().items()}
    try:
        return text.format(**parts)
    except (KeyError, IndexError, ValueError):  # a broken translation: keep the English
        return None


def _match(catalog: tuple[tuple[re.Pattern[str], str], ...], text: str) -> str | None:
    for pattern, template in catalog:
        m = pattern.fullmatch(text)
        if m is not None:
            return _fill(template, m)
    return None


def _part(value: str) -> str:
    """A variable part: translated when it is itself a phrase or a sentence we know."""
    if value in WORDS:
        return tr(value)
    out = _match(PHRASES, value) or _match(SENTENCES, value)
    if out is None and not value.endswith("."):
        # A sentence quoted without its full stop (the crash cause in the fallback reason).
        out = _match(SENTENCES, value + ".")
        if out is not None:
            out = out.rstrip("。.")
    return value if out is None else out


def translate(sentence: str) -> str:
    """`sentence` in the current language, or as it is when no translation fits."""
    if not sentence:
        return sentence
    return _match(SENTENCES, sentence) or sentence


def translate_all(sentences: Iterable[str]) -> list[str]:
    return [translate(s) for s in sentences]


def known(sentence: str) -> bool:
    """Whether the catalog has an entry for this English sentence (for the coverage test)."""
    return any(p.fullmatch(sentence) for p, _t in SENTENCES)
