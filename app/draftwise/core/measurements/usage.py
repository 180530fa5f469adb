"""What the user's own requests did, per model and setup, and a small sample of their prompts.

The engine's log has one `eval time = X ms / N tokens` line per finished request and, when it
drafted, a `draft acceptance = … (A accepted / D generated)` line after it
(server-context.cpp `print_timings`). `Tally` reads those lines as they come — from `draftwise
launch` and the window alike — so requests from any client count, the window's chat and other
apps through the API. Their text is not in that log (the pinned engine logs request bodies
only at debug level, server-http.cpp `log_server_request`, which `-lv 4` does not print). With
the user's consent the engine writes each request's prompt into a folder of ours instead
(`--log-prompts-dir`): core/measurements/prompt_log.py takes those in as kept prompts, for
every client. The window's chat keeps its own request (`prompt_of_body`) only where its engine
does not log it into that folder (another engine kind, the user's own `--log-prompts-dir`);
without consent nothing is kept.

Kept per (model `file_key`, engine build, machine, the setup running): the last `KEEP_REQUESTS`
requests' figures (tokens, generation ms, drafted, accepted) and a count of all. Kept per model
(its path: a re-download keeps them): the last `KEEP_PROMPTS` prompts, each cut to
`PROMPT_CHARS`, and when it was last measured again on them. Nothing leaves this computer:
the prompts are what a measurement on the user's own work (core/measuring/learn.py)
runs, and nothing else reads them.

`speculation-usage.json` in paths.data_dir(), one `records.JsonRecord` (docs/records.md).
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from draftwise.core import identity, paths
from draftwise.core.measurements import live_figures, measurement
from draftwise.core.messages import Message, msg
from draftwise.core.records import JsonRecord, Store, write_error
from draftwise.core.speculation.setup import NONE, Setup

log = logging.getLogger(__name__)

FILE_NAME = "speculation-usage.json"
PROMPTS_FILE = "your-prompts.json"
VERSION = 1

# Bounds: enough requests for a mean and its spread, a few prompts to measure on, and no
# more of the user's text than that kept on disk.
KEEP_REQUESTS = 50
# The line the engine writes when a request's slot is released, after its timings
# (server-context.cpp `release`): a request with no acceptance line is complete there.
_AFTER_TIMINGS = "stop processing: n_tokens"
KEEP_PROMPTS = 20
# Entries (model, build, machine, setup) kept at most: a new engine build or setup starts one.
KEEP_KEYS = 64
PROMPT_CHARS = 4000
# The folder beside the prompts record where the user's engines log each request's prompt,
# one folder per model (core/measurements/prompt_log.py).
PROMPT_LOG = "prompt-log"


@dataclass(frozen=True)
class FinishedRequest:
    """One finished request, from the engine's own per-request lines."""

    tokens: int
    ms: float
    drafted: int = 0
    accepted: int = 0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens * 1000.0 / self.ms if self.ms > 0 else 0.0


@dataclass(frozen=True)
class Key:
    model: str  # identity.file_key of the model
    engine: str  # identity.engine_build_key
    machine: str  # identity.machine_key of the machine as selected
    setup: Setup  # what the launch ran

    def text(self) -> str:
        return "\n".join((self.model, self.engine, self.machine, json.dumps(self.setup.to_json(), sort_keys=True)))


def key_for(model: Path | str, binary: Path | str, machine: Any, setup: Setup) -> Key:
    return Key(identity.file_key(model), identity.engine_build_key(binary), identity.machine_key(machine), setup)


@dataclass(frozen=True)
class Usage:
    """The requests one setup served for one model (the last KEEP_REQUESTS, and how many in all)."""

    key: Key
    requests: tuple[FinishedRequest, ...] = ()
    count: int = 0
    last: str = ""

    @property
    def tokens_per_s(self) -> float | None:
        """Generation speed over the kept requests: tokens over time, as the measurement's."""
        ms = sum(r.ms for r in self.requests)
        return sum(r.tokens for r in self.requests) * 1000.0 / ms if ms > 0 else None

    @property
    def acceptance(self) -> float | None:
        drafted = sum(r.drafted for r in self.requests)
        return sum(r.accepted for r in self.requests) / drafted if drafted > 0 else None

    @property
    def drafted(self) -> int:
        return sum(r.drafted for r in self.requests)

    def error(self) -> float:
        """The relative standard error of the mean per-request speed: requests of different
        lengths and kinds vary far more than one prompt between measurement rounds."""
        speeds = [r.tokens_per_s for r in self.requests if r.tokens_per_s > 0]
        return measurement.relative_error(speeds) if len(speeds) >= 2 else 1.0

    def plus(self, new: tuple[FinishedRequest, ...], when: str) -> Usage:
        return replace(self, requests=(*self.requests, *new)[-KEEP_REQUESTS:], count=self.count + len(new), last=when)


@dataclass(frozen=True)
class Model:
    """What is kept per model (by path): the user's prompts and the last measurement on them."""

    path: str = ""  # identity.path_key
    prompts: tuple[str, ...] = ()
    remeasured: float | None = None  # time.time() of the last measurement on them

    def to_json(self) -> dict[str, Any]:
        return {"model": self.path, "prompts": list(self.prompts), "remeasured": self.remeasured}

    @classmethod
    def from_json(cls, data: Any) -> Model:
        prompts = data["prompts"]
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            raise ValueError("prompts are not a list of texts")
        when = data.get("remeasured")
        return cls(str(data["model"]), tuple(prompts), float(when) if when is not None else None)


def _usage_to_json(u: Usage) -> dict[str, Any]:
    return {"key": {"model": u.key.model, "engine": u.key.engine, "machine": u.key.machine,
                    "setup": u.key.setup.to_json()},
            "requests": [[r.tokens, r.ms, r.drafted, r.accepted] for r in u.requests], "count": u.count,
            "last": u.last}


def _usage_from_json(e: Any) -> Usage:
    k = e["key"]
    key = Key(str(k["model"]), str(k["engine"]), str(k["machine"]), Setup.from_json(k["setup"]))
    requests = tuple(FinishedRequest(int(t), float(ms), int(d), int(a)) for t, ms, d, a in e["requests"])
    return Usage(key, requests, int(e["count"]), str(e.get("last", "")))


def _list_of(read: Any) -> Any:
    def parse(entries: Any, _version: int) -> list[Any]:
        if not isinstance(entries, list):
            raise ValueError("no entries list")
        return [read(e) for e in entries]
    return parse


class UsageRecords(Store):
    """The persistent records: the requests' figures (`record_file`) and, in a file of their
    own beside it (`prompts_file`, the user's text apart from numbers), the prompts. Cheap to
    create; reads the files on each question."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or paths.data_dir() / FILE_NAME
        self.record_file = JsonRecord(path, msg("record of your requests' speed"), VERSION,
                                      parse=_list_of(_usage_from_json),
                                      dump=lambda us: [_usage_to_json(u) for u in us], empty=list)
        self.prompts_file = JsonRecord(path.with_name(PROMPTS_FILE), msg("record of your prompts"), VERSION,
                                       parse=_list_of(Model.from_json), dump=lambda ms: [m.to_json() for m in ms],
                                       empty=list)

    @property
    def problem(self) -> Message | None:
        return self.record_file.problem or self.prompts_file.problem

    @property
    def prompt_log(self) -> Path:
        """The folder of every model's logged prompts, beside the prompts record."""
        return self.prompts_file.path.parent / PROMPT_LOG

    def usage(self, key: Key) -> Usage | None:
        return next((u for u in self.record_file.read() if u.key == key), None)

    def model(self, model: Path | str) -> Model:
        path = identity.path_key(model)
        return next((m for m in self.prompts_file.read() if m.path == path), None) or Model(path)

    def add(self, key: Key, requests: tuple[FinishedRequest, ...]) -> None:
        """Keep finished requests under `key` (the last KEEP_REQUESTS of them)."""
        if not requests:
            return
        when = time.strftime("%Y-%m-%dT%H:%M:%S")

        def change(old: list[Usage]) -> list[Usage]:
            before = next((u for u in old if u.key == key), None) or Usage(key)
            # The latest last: a file of many models, builds and setups drops the oldest first.
            return [*(u for u in old if u.key != key), before.plus(requests, when)][-KEEP_KEYS:]

        self.record_file.update(change)

    def _change_model(self, model: Path | str, change: Any) -> None:
        path = identity.path_key(model)

        def update(old: list[Model]) -> list[Model]:
            before = next((m for m in old if m.path == path), None) or Model(path)
            return [*(m for m in old if m.path != path), change(before)]

        self.prompts_file.update(update)

    def add_prompts(self, model: Path | str, prompts: tuple[str, ...]) -> None:
        """Keep prompts sent to a model (the last KEEP_PROMPTS, each cut to PROMPT_CHARS)."""
        prompts = tuple(p[-PROMPT_CHARS:] for p in prompts if p.strip())
        if prompts:
            self._change_model(model, lambda m: replace(
                m, prompts=(*(p for p in m.prompts if p not in prompts), *prompts)[-KEEP_PROMPTS:]))

    def remeasured(self, model: Path | str, when: float) -> None:
        """Note a measurement on the user's prompts and drop the model's requests kept so far:
        from now on they are compared with what that measurement found."""
        self._change_model(model, lambda m: replace(m, remeasured=when))
        self._drop_usage(model)

    def forget(self, model: Path | str) -> None:
        """Drop everything kept of a model: its requests' figures and its prompts."""
        path = identity.path_key(model)
        self.prompts_file.update(lambda old: [m for m in old if m.path != path])
        self._drop_usage(model)

    def models(self) -> list[Model]:
        """Every model with prompts kept, the latest kept last."""
        return [m for m in self.prompts_file.read() if m.prompts]

    def forget_prompts(self, model: Path | str | None = None) -> int:
        """Delete the kept prompts of one model, or of every model (None); the figures and
        when each was last measured again stay. Returns how many prompts were deleted."""
        path = identity.path_key(model) if model is not None else None
        gone = sum(len(m.prompts) for m in self.prompts_file.read() if path is None or m.path == path)
        if gone:
            self.prompts_file.update(lambda old: [
                m if path is not None and m.path != path else replace(m, prompts=()) for m in old])
        return gone

    def _drop_usage(self, model: Path | str) -> None:
        self.record_file.update(lambda old: [u for u in old if not identity.same_file(u.key.model, model)])


def keep_prompt(model: Path | str | None, body: dict[str, Any], path: Path | None = None) -> Message | None:
    """The window chat's request, kept for measuring on the user's own work. A failed write
    costs only that, and is said: the sentence for the chat to show (None when kept)."""
    text = prompt_of(body)
    if text is None or model is None:
        return None
    try:
        UsageRecords(path).add_prompts(model, (text,))
    except OSError as exc:
        return msg("Your prompt could not be kept for measuring on your own work ({error}).",
                   error=write_error(exc))
    return None


def forget_all_prompts(path: Path | None = None) -> Message | None:
    """Delete every kept prompt and every prompt the engine logged (the box unticked); a
    sentence naming what could not be deleted."""
    records = UsageRecords(path)
    try:
        records.forget_prompts()
    except OSError as exc:
        return msg("Your kept prompts could not be deleted from {path}: {error}. Delete that file by hand.",
                   path=str(records.prompts_file.path), error=exc.strerror or str(exc))
    try:
        remove_tree(records.prompt_log)
    except OSError as exc:
        return msg("The prompts the engine logged could not be deleted from {path}: {error}. Delete that folder "
                   "by hand.", path=str(records.prompt_log), error=exc.strerror or str(exc))
    return None


def remove_tree(where: Path) -> None:
    """Delete a folder and what it holds; one that is not there is fine. OSError otherwise."""
    try:
        shutil.rmtree(where)
    except FileNotFoundError:
        if where.exists():  # a file went while it was deleted (an ingestion beside it): once more
            shutil.rmtree(where, ignore_errors=True)


# ------------------------------------------------------------------ reading the engine's lines
def prompt_of_body(body: str) -> str | None:
    """The prompt a request body carries (a /completion `prompt` text, or a chat's `messages`
    as a plain transcript ending where the model answers), cut to PROMPT_CHARS; None for any
    other request (a token list, an embedding, a malformed body)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return prompt_of(data) if isinstance(data, dict) else None


def prompt_of(data: dict[str, Any]) -> str | None:
    """`prompt_of_body` of a body not yet encoded (the chat's own request)."""
    prompt = data.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return prompt[-PROMPT_CHARS:]
    messages = data.get("messages")
    if isinstance(messages, list) and messages:
        parts = []
        for m in messages:
            if not isinstance(m, dict):
                return None
            text = _text_of(m.get("content"))
            if text:
                parts.append(f"{str(m.get('role', 'user')).capitalize()}: {text}")
        if parts:
            # The end of the conversation is what the model continues: keep that when cutting.
            return ("\n".join(parts) + "\nAssistant:")[-PROMPT_CHARS:]
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: the text ones (pictures are not prompts)
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


class Tally:
    """Reads the engine's lines of one launch; `take()` hands over the requests finished since."""

    def __init__(self) -> None:
        self._pending: FinishedRequest | None = None
        self._done: list[FinishedRequest] = []

    def line(self, line: str) -> None:
        acceptance = live_figures.parse_acceptance_line(line)
        if acceptance is not None and self._pending is not None:
            # The engine writes it right after its request's eval line (print_timings).
            self._pending = replace(self._pending, drafted=acceptance.generated, accepted=acceptance.accepted)
            self._flush()
            return
        timing = live_figures.parse_eval_line(line)
        if timing is not None:
            self._flush()
            if timing[0] > 0 and timing[1] > 0:
                self._pending = FinishedRequest(timing[0], timing[1])
        elif self._pending is not None and _AFTER_TIMINGS in line:
            self._flush()  # the request's last line: no acceptance line came (nothing drafted)

    def lines(self, lines: list[str]) -> None:
        for line in lines:
            self.line(line)

    def _flush(self) -> None:
        if self._pending is not None:
            self._done.append(self._pending)
            self._pending = None

    def take(self, *, final: bool = False) -> tuple[FinishedRequest, ...]:
        """The requests finished since the last call. One whose acceptance line may still come
        (the batch ended after its eval line) waits for it, for its slot's release line, or for
        `final` (the engine stopped)."""
        if final:
            self._flush()
        done = tuple(self._done)
        self._done.clear()
        return done


class Keeper:
    """One launch's requests, read from its lines and kept under its key (`save` now and then
    and when the engine stops: a write per request would be a write per few seconds).

    `prompts`: where the launch's engine logs its prompts (core/measurements/prompt_log.py
    `Ingest`), taken in by each save that saw a request finish, and by the last."""

    def __init__(self, key: Key, store: UsageRecords | None = None,
                 prompts: Callable[[bool], Message | None] | None = None) -> None:
        self.key = key
        self.store = store or UsageRecords()
        self.tally = Tally()
        self.prompts = prompts
        self.saved = 0  # requests kept so far
        self.problem: Message | None = None  # why a save failed (said once per launch)
        self.prompts_problem: Message | None = None  # why the logged prompts were not kept (once)

    def lines(self, lines: list[str]) -> None:
        self.tally.lines(lines)

    def save(self, *, final: bool = False) -> Message | None:
        """Keep the requests finished since the last save (and the prompts the engine logged
        for them). A failed write is returned the first time, for the caller to say (the
        window's warnings, the CLI's); None otherwise."""
        requests = self.tally.take(final=final)
        said = None
        if self.prompts is not None and (requests or final):
            problem = self.prompts(final)
            if problem is not None and self.prompts_problem is None:
                self.prompts_problem = said = problem
        if not requests:
            return said
        try:
            self.store.add(self.key, requests)
        except OSError as exc:
            first = self.problem is None
            self.problem = msg("Your requests' figures could not be kept ({error}); learning from use misses them.",
                               error=write_error(exc))
            return self.problem if first else said
        self.saved += len(requests)
        return said

    def ran_without_speculation(self) -> Message | None:
        """The engine runs on without speculation (the startup fallback after its drafter
        crashed): the requests so far are kept under the setup they ran with, the later ones
        under none's, so that the planned setup's figures are its own. A failed write, as `save`."""
        said = self.save()
        self.key = replace(self.key, setup=NONE)
        return said
