"""Hub files judged before download: headers over HTTP ranges, the same session as `plan`,
starters found on the hub and verified by header, and every bad input with its sentence.

The real huggingface_hub client talks to the loopback stand-in (testing/hubstub.py); models
are tiny real GGUF files (testing/tinymodels.py), so the verdicts are the planner's own."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from draftwise.core.hub import catalog, client, remote, starters
from draftwise.core.hub.client import HubError
from draftwise.core.hub.files import Drafting
from draftwise.core.hub.judge import Judge
from draftwise.core.launch import prepare, session
from draftwise.core.machine import hardware, speed
from draftwise.core.messages import msg
from draftwise.testing import tinydrafts as td
from draftwise.testing import tinymodels as tm

RATE = speed.Throughput(20e9, "described")
REPO = "org/Tiny-GGUF"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hubmodels")
    target = td.paying_target()
    return {
        "mtp": tm.write_tiny_model(folder / "mtp" / "tiny-mtp-Q8_0.gguf", tm.mtp_model())[0],
        "trunk": tm.write_tiny_model(folder / "trunk" / "tiny-mtp-Q8_0.gguf", tm.mtp_model(), part="trunk")[0],
        "target": tm.write_tiny_model(folder / "pair" / "tiny-Q8_0.gguf", target)[0],
        "draft": tm.write_tiny_model(folder / "pair" / "tiny-draft-Q8_0.gguf", td.exact_draft(target))[0],
    }


def _engine() -> session.Engine:
    from draftwise.cli.main import _engine_caps

    binary, caps, backend = _engine_caps(None)
    return session.Engine(Path(binary), caps, backend)


def _judge(machine=None) -> Judge:
    machine = machine or hardware.cpu_only(16 << 30, 12 << 30)
    return Judge(machine, _engine(), RATE, records=session.Records.none())


def _normal(plan: dict, folder: Path) -> str:
    """A plan's JSON with the folder it was made in taken out (the only thing that differs)."""
    return json.dumps(plan, sort_keys=True, default=str).replace(str(folder), "<folder>")


# ------------------------------------------------------------------ the header over ranges
def test_header_copy_reads_like_the_file_and_is_kept(hub, files):
    from draftwise.core.gguf import reader as gguf

    f = hub.add_sparse(REPO, "tiny-mtp-Q8_0.gguf", files["mtp"])
    listed = client.list_models(REPO)[0].first
    copy = remote.read_remote_header(REPO, listed)
    local, there = gguf.read_header(files["mtp"]), gguf.read_header(copy.path)
    assert [(t.name, t.shape, t.type_name, t.offset) for t in there.tensors] == [
        (t.name, t.shape, t.type_name, t.offset) for t in local.tensors]
    assert there.kv == local.kv and there.tokens_sha256 == local.tokens_sha256
    assert copy.path.stat().st_size == files["mtp"].stat().st_size and copy.header_bytes == local.data_offset
    assert all(r.startswith("bytes=") for r in f.requests) and copy.fetched == f.served
    # Kept per sha256: the second read asks the hub nothing.
    again = remote.read_remote_header(REPO, listed)
    assert again.kept and len(f.requests) == 1


def test_a_header_is_read_in_growing_ranges_not_whole(hub, files, monkeypatch):
    monkeypatch.setattr(remote, "FIRST_RANGE", 4096)
    monkeypatch.setattr(remote, "WINDOW", 1024)
    f = hub.add_sparse(REPO, "tiny-mtp-Q8_0.gguf", files["mtp"])
    copy = remote.read_remote_header(REPO, client.list_models(REPO)[0].first)
    assert len(f.requests) > 1  # grown, not asked for at once
    assert copy.fetched < copy.header_bytes * 1.5 + 4096  # a quarter over at most, per step


# ------------------------------------------------------------------ one path with `plan`
@pytest.mark.parametrize("kind", ["mtp", "pair"])
def test_the_verdict_is_the_plan_of_the_downloaded_file(hub, files, tmp_path, kind):
    """The same session plans the header copy and the downloaded file: the same JSON, but
    for the folder."""
    from draftwise.core.hub import fetch

    if kind == "mtp":
        hub.add_sparse(REPO, "tiny-mtp-Q8_0.gguf", files["mtp"], sha256=None)
    else:
        hub.add_sparse(REPO, "tiny-Q8_0.gguf", files["target"])
        hub.add_sparse(REPO, "tiny-draft-Q8_0.gguf", files["draft"])
    listing = client.list_models(REPO)
    judge = _judge()
    (verdict,) = judge.judge_listing(listing)
    assert verdict.error is None
    assert verdict.speculation == (Drafting.MTP if kind == "mtp" else Drafting.DRAFT)
    assert (verdict.drafter_model is None) == (kind == "mtp")
    got = fetch.fetch(verdict.model, tmp_path / "library", drafter=verdict.drafter_model)
    planned = session.plan_launch(prepare.Request(model=got.model), judge.engine, judge.machine, judge.records)
    assert verdict.planned_bytes == planned.prepared.plan.bytes.total
    assert verdict.context == planned.prepared.plan.ctx and verdict.fits == planned.prepared.plan.fits
    assert _normal(verdict.plan_json, verdict.local.parent) == _normal(planned.prepared.to_json(), got.model.parent)


def _in_a_folder(folder: Path, files: dict[str, Path]) -> Path:
    """The repository's files laid in a folder under their hub names (hard links: no bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in files.items():
        os.link(source, folder / name)
    return folder


def _local_plan(judge: Judge, model: Path):
    return session.plan_launch(prepare.Request(model=model), judge.engine, judge.machine, judge.records).prepared


def _same_as_local(verdict, local) -> None:
    """A verdict against the local plan of the same file: the same JSON but for the folder,
    the same drafter, kind, total, context and fit."""
    from draftwise.core.hub.judge import speculation_kind

    assert verdict.error is None, verdict.error
    drafter = verdict.drafter_model.first.path if verdict.drafter_model else None
    assert drafter == (Path(local.spec.draft).name if local.spec.draft else None)
    assert verdict.speculation == speculation_kind(local.spec)
    assert (verdict.planned_bytes, verdict.context, verdict.fit_state) == (
        local.plan.bytes.total, local.plan.ctx, local.plan.fit_state)
    assert _normal(verdict.plan_json, verdict.local.parent) == _normal(local.to_json(), local.model.path.parent)


def test_a_small_model_of_the_family_beside_the_big_one_drafts_for_it_as_in_a_folder(hub, files, tmp_path):
    """No name says "draft": the resolver's companion search finds the small model of the
    family beside the big one, on the hub as in a folder (the hub judge has no rule of its own)."""
    laid = {"tiny-4b-it-Q8_0.gguf": files["target"], "tiny-270m-it-Q8_0.gguf": files["draft"]}
    for name, source in laid.items():
        hub.add_sparse(REPO, name, source)
    listing = client.list_models(REPO)
    assert not any(m.drafter for m in listing)  # by name, both are models
    judge = _judge()
    verdicts = {v.model.name: v for v in judge.judge_listing(listing)}
    assert set(verdicts) == set(laid)  # the small one is a model too
    big = verdicts["tiny-4b-it-Q8_0.gguf"]
    assert big.speculation == Drafting.DRAFT and big.drafter_name == "tiny-270m-it-Q8_0.gguf"
    folder = _in_a_folder(tmp_path / "folder", laid)
    for name, verdict in verdicts.items():
        _same_as_local(verdict, _local_plan(judge, folder / name))
    # `get REPO:FILE` judges the one file beside the same repository: the same verdict.
    one = judge.judge(next(m for m in listing if m.name == "tiny-4b-it-Q8_0.gguf"), listing)
    assert one.to_json() == big.to_json()


def test_get_list_json_and_plan_json_agree(hub, files, tmp_path):
    """The CLI's own words: `get REPO --list --json` before, `plan --json` after download."""
    hub.add_sparse(REPO, "tiny-mtp-Q8_0.gguf", files["mtp"])
    box = tmp_path / "box.json"
    box.write_text(json.dumps({"ram_gb": 16, "gpus": [], "cpu_read_gbs": 20}))
    env = {**__import__("os").environ}
    run = [sys.executable, "-m", "draftwise.cli.main"]
    listed = json.loads(subprocess.run([*run, "get", REPO, "--list", "--json", "--machine", str(box)],
                                       capture_output=True, text=True, check=True, env=env).stdout)
    (row,) = listed
    assert {"file", "quant", "size", "fits", "planned_bytes", "context", "tokens_per_s", "readable",
            "speculation", "drafter", "projector", "header_bytes"} <= set(row)
    assert row["speculation"] == "mtp" and row["fits"] and row["file"] == "tiny-mtp-Q8_0.gguf"
    assert 0 < row["header_bytes"] <= files["mtp"].stat().st_size
    subprocess.run([*run, "get", f"{REPO}:tiny-mtp-Q8_0.gguf", "--to", str(tmp_path / "lib"),
                    "--machine", str(box)], capture_output=True, text=True, check=True, env=env)
    model = tmp_path / "lib" / "org" / "Tiny-GGUF" / "tiny-mtp-Q8_0.gguf"
    plan = json.loads(subprocess.run([*run, "plan", str(model), "--json", "--machine", str(box)],
                                     capture_output=True, text=True, check=True, env=env).stdout)
    assert plan["plan"]["bytes"]["total"] == row["planned_bytes"] and plan["plan"]["ctx"] == row["context"]


# ------------------------------------------------------------------ starters
MTP_STARTER = catalog.Starter("Tiny MTP", "tiny-mtp", "Q8_0", msg("A tiny one."), Drafting.MTP,
                              size=1 << 20, publishers=("first", "second"))


def sized_as(starter: catalog.Starter, path: Path) -> catalog.Starter:
    """`starter` titled for the model at `path`: its architecture, parameter count and blocks
    (without an MTP head's), so a tiny stand-in file is of the starter's size."""
    from draftwise.core.gguf import reader as gguf

    info = gguf.read_model(path)
    return dataclasses.replace(starter, arch=info.architecture, params=info.parameters,
                               blocks=(info.block_count or 0) - (info.nextn_predict_layers or 0))


def test_a_starter_without_its_head_is_passed_over_for_one_with_it(hub, files):
    hub.add_sparse("first/tiny-mtp-GGUF", "tiny-mtp-Q8_0.gguf", files["trunk"])  # the head stripped
    hub.add_sparse("second/tiny-mtp-GGUF", "tiny-mtp-Q8_0.gguf", files["mtp"])
    hub.add_sparse("stranger/tiny-mtp-GGUF", "tiny-mtp-Q8_0.gguf", files["mtp"])  # not a publisher
    hub.repos["first/tiny-mtp-GGUF"].downloads = 100
    machine = hardware.cpu_only(16 << 30, 12 << 30)
    found = starters.starters_for(machine, RATE, _judge(machine), starters=(sized_as(MTP_STARTER, files["mtp"]),))
    (offer,) = found.offers
    assert offer.repo == "second/tiny-mtp-GGUF" and offer.verdict.speculation == Drafting.MTP
    assert found.offline is None and offer.to_json()["repo"] == "second/tiny-mtp-GGUF"


def test_a_starter_only_published_without_its_head_is_left_out(hub, files):
    hub.add_sparse("first/tiny-mtp-GGUF", "tiny-mtp-Q8_0.gguf", files["trunk"])
    machine = hardware.cpu_only(16 << 30, 12 << 30)
    found = starters.starters_for(machine, RATE, _judge(machine), starters=(sized_as(MTP_STARTER, files["mtp"]),))
    assert found.offers == []
    assert "no file of first/tiny-mtp-GGUF runs here as promised" in str(found.left_out[0][1])


TINY_4B = catalog.Starter("Tiny 4B", "tiny-4b-it", "Q8_0", msg("A tiny one with its small drafter."),
                          Drafting.DRAFT, size=1 << 20, publishers=("first", "second"))


def test_a_starter_never_offers_a_file_of_another_size_than_its_title(hub, files):
    """The small model comes first in the listing (smaller) with the starter's quant: the
    starter's file is still the one its header says is of the title's size, the small one its
    drafter; a repository holding only the small one is passed over."""
    hub.add_sparse("first/tiny-4b-it-GGUF", "tiny-270m-it-Q8_0.gguf", files["draft"])
    hub.add_sparse("first/tiny-4b-it-GGUF", "tiny-4b-it-Q8_0.gguf", files["target"])
    hub.add_sparse("second/tiny-4b-it-GGUF", "tiny-270m-it-Q8_0.gguf", files["draft"])
    hub.repos["second/tiny-4b-it-GGUF"].downloads = 100
    assert client.list_models("first/tiny-4b-it-GGUF")[0].name == "tiny-270m-it-Q8_0.gguf"
    machine = hardware.cpu_only(16 << 30, 12 << 30)
    starter = sized_as(TINY_4B, files["target"])
    found = starters.starters_for(machine, RATE, _judge(machine), starters=(starter,))
    (offer,) = found.offers
    assert (offer.repo, offer.model.name) == ("first/tiny-4b-it-GGUF", "tiny-4b-it-Q8_0.gguf")
    assert offer.size == files["target"].stat().st_size
    assert offer.verdict.speculation == Drafting.DRAFT and offer.verdict.drafter_name == "tiny-270m-it-Q8_0.gguf"
    alone = starters.starters_for(machine, RATE, _judge(machine), starters=(dataclasses.replace(
        starter, publishers=("second",)),))
    assert alone.offers == []
    assert str(alone.left_out[0][1]) == "Tiny 4B: no file of second/tiny-4b-it-GGUF runs here as promised."


def test_offline_the_curated_list_is_offered_and_says_so(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    machine = hardware.cpu_only(23 << 30, 20 << 30)
    found = starters.starters_for(machine, RATE, _judge(machine))
    assert found.offline is not None and "could not be reached" in str(found.offline)
    assert found.offers and all(o.verdict is None for o in found.offers)
    assert found.offers[0].estimate.readable  # the smallest machine gets a readable one, first


def test_the_curated_starters_that_draft_themselves_come_first_in_the_data():
    kinds = [s.drafts for s in catalog.STARTERS]
    assert kinds[:7] == [Drafting.MTP] * 6 + [Drafting.MTP_ASSISTANT]
    assert {s.hint for s in catalog.STARTERS} >= {"Qwen3.5-0.8B", "Qwen3.5-9B", "Qwen3.6-35B-A3B", "gpt-oss-20b"}


# ------------------------------------------------------------------ a tester's repository, real geometries
# Gemma 3 4B with Gemma 3 270M beside it in one repository, as the corpus writes them (the
# published headers, a hole for the data): judged "none" by a drafter rule of the hub's own,
# and its "Gemma 3 4B" starter offered the 270M (the first file of the quant, the smaller).
GEMMA_REPO = "unsloth/gemma-3-4b-it-GGUF"
GEMMA_4B, GEMMA_270M = "gemma-3-4b-it-Q4_K_M.gguf", "gemma-3-270m-it-Q4_K_M.gguf"
GEMMA_STARTER = next(s for s in catalog.STARTERS if s.title == "Gemma 3 4B")


@pytest.fixture(scope="module")
def gemma3(pinned_source: Path) -> dict[str, Path]:
    from draftwise.testing.corpus import build, registry

    try:
        return {GEMMA_4B: build.generate(registry.get("gemma-3-4b-it"), pinned=pinned_source),
                GEMMA_270M: build.generate(registry.get("gemma-3-270m-it"), pinned=pinned_source)}
    except RuntimeError as exc:
        pytest.skip(f"the corpus files could not be written: {exc}")


def _publish(hub, repo: str, files: dict[str, Path]) -> None:
    for name, source in files.items():
        # A stand-in sha256: hashing gigabytes of hole would only slow the test.
        hub.add_sparse(repo, name, source, sha256=f"{name}:{source.stat().st_size}".encode().hex()[:64].ljust(64, "0"))


def test_the_gemma_3_4b_beside_its_270m_is_judged_as_the_folder_plans_it(hub, gemma3, tmp_path):
    _publish(hub, GEMMA_REPO, gemma3)
    judge = _judge()
    verdicts = {v.model.name: v for v in judge.judge_listing(client.list_models(GEMMA_REPO))}
    big = verdicts[GEMMA_4B]
    assert big.speculation == Drafting.DRAFT and big.drafter_name == GEMMA_270M
    folder = _in_a_folder(tmp_path / "folder", gemma3)
    for name, verdict in verdicts.items():
        _same_as_local(verdict, _local_plan(judge, folder / name))


def test_the_gemma_3_4b_starter_offers_the_4b_and_never_the_270m(hub, gemma3):
    _publish(hub, GEMMA_REPO, gemma3)
    machine = hardware.cpu_only(16 << 30, 12 << 30)
    judge = _judge(machine)
    (offer,) = starters.starters_for(machine, RATE, judge, starters=(GEMMA_STARTER,)).offers
    assert (offer.repo, offer.model.name, offer.size) == (GEMMA_REPO, GEMMA_4B, gemma3[GEMMA_4B].stat().st_size)
    assert offer.verdict.speculation == Drafting.DRAFT and offer.verdict.drafter_name == GEMMA_270M
    # The speed is the 4B's own, not the 270M's.
    listed = {v.model.name: v for v in judge.judge_listing(client.list_models(GEMMA_REPO))}
    assert offer.estimate.tokens_per_s == listed[GEMMA_4B].estimate.tokens_per_s
    assert offer.estimate.tokens_per_s < listed[GEMMA_270M].estimate.tokens_per_s / 5


def test_a_repository_holding_only_the_270m_offers_no_gemma_3_4b(hub, gemma3):
    _publish(hub, GEMMA_REPO, {GEMMA_270M: gemma3[GEMMA_270M]})
    machine = hardware.cpu_only(16 << 30, 12 << 30)
    found = starters.starters_for(machine, RATE, _judge(machine), starters=(GEMMA_STARTER,))
    assert found.offers == []
    assert str(found.left_out[0][1]) == f"Gemma 3 4B: no file of {GEMMA_REPO} runs here as promised."


def test_the_curated_starters_name_the_corpus_geometries_of_their_titles():
    """Each starter whose published config the corpus holds: its architecture and blocks are
    the corpus's, and its header's parameter count is within the spread of the title's."""
    import math

    from draftwise.testing.corpus import registry

    corpus = {"Qwen3.5-0.8B": "Qwen3.5-0.8B", "Qwen3.6-35B-A3B": "Qwen3.6-35B-A3B",
              "gemma-4-26B-A4B-it": "gemma-4-26B-A4B-it", "gpt-oss-20b": "gpt-oss-20b", "gemma-3-4b-it": "gemma-3-4b-it"}
    for s in catalog.STARTERS:
        if s.hint not in corpus:
            assert s.blocks is None and s.arch.startswith("qwen35"), s.title
            continue
        spec = registry.get(corpus[s.hint])
        kv = {k.rsplit(".", 1)[-1]: getattr(v, "value", v) for k, v in spec.kv if k.startswith(f"{spec.arch}.")}
        params = sum(math.prod(t.ne) for t in spec.tensors)
        assert (s.arch, s.blocks) == (spec.arch, kv["block_count"] - kv.get("nextn_predict_layers", 0)), s.title
        assert abs(params - s.params) <= starters.PARAMS_SPREAD * s.params, (s.title, params)
    # The 270M is not of the 4B's size, nor the 12B (the family's sizes on either side).
    for other in ("gemma-3-270m-it", "gemma-3-12b-it", "gemma-3-1b-it"):
        assert abs(sum(math.prod(t.ne) for t in registry.get(other).tensors) - GEMMA_STARTER.params) > (
            starters.PARAMS_SPREAD * GEMMA_STARTER.params)


# ------------------------------------------------------------------ bad input
def _listed(hub, data: bytes | Path, name="tiny-Q8_0.gguf", **faults):
    if isinstance(data, Path):
        hub.add_sparse(REPO, name, data, **faults)
    else:
        hub.add_file(REPO, name, data, **faults)
    return client.list_models(REPO)[0]


def test_a_file_that_is_not_gguf_is_named(hub):
    model = _listed(hub, b"<html>not a model</html>" * 100)
    (verdict,) = _judge().judge_listing([model])
    assert verdict.error is not None and "cannot be read as a GGUF model" in str(verdict.error)
    assert "org/Tiny-GGUF/tiny-Q8_0.gguf" in str(verdict.error)
    assert not remote.copy_path(REPO, "main", "tiny-Q8_0.gguf").exists()  # nothing half-written


def test_a_header_cut_short_is_named(hub, files):
    size = files["mtp"].stat().st_size
    model = _listed(hub, files["mtp"], cut_at=2000)  # listed whole, served 2000 bytes
    with pytest.raises(HubError, match="shorter than its listing says"):
        remote.read_remote_header(REPO, model.first)
    assert model.size == size and not remote.copy_path(REPO, "main", model.first.path).exists()


def test_a_server_that_ignores_range_is_read_to_the_cap_and_says_so(hub, files, tmp_path):
    padded = tmp_path / "padded.gguf"  # the model with 64 MiB of hole after it: big to send whole
    padded.write_bytes(files["mtp"].read_bytes())
    with padded.open("r+b") as f:
        f.truncate(64 << 20)
    big = _listed(hub, padded, ignore_range=True)
    # The header fits under the cap: read from the one whole-file answer, then hung up.
    copy = remote.read_remote_header(REPO, big.first)
    assert copy.header_bytes < copy.size
    f = hub.repos[REPO].files[big.first.path]
    assert f.served < copy.size // 4  # not downloaded whole
    # Under a cap smaller than the header: stopped there, and said why.
    remote.copy_path(REPO, "main", big.first.path).unlink()
    with pytest.raises(HubError, match="ignores partial requests"):
        remote.read_remote_header(REPO, big.first, cap=4096)


def test_a_gated_repository_says_how_to_get_access(hub, files):
    model = _listed(hub, files["mtp"])
    hub.repos[REPO].gated = True
    with pytest.raises(HubError, match="HF_TOKEN"):
        remote.read_remote_header(REPO, model.first)


def test_a_file_gone_from_the_hub_says_refresh(hub, files):
    model = _listed(hub, files["mtp"])
    del hub.repos[REPO].files[model.first.path]
    with pytest.raises(HubError, match="refresh the list"):
        remote.read_remote_header(REPO, model.first)


def test_a_dropped_connection_is_retried(hub, files, monkeypatch):
    monkeypatch.setattr(remote, "FIRST_RANGE", 8192)
    model = _listed(hub, files["mtp"], drop_after=3000)
    copy = remote.read_remote_header(REPO, model.first)
    assert copy.header_bytes > 3000


def test_a_hub_that_does_not_answer_times_out_with_a_sentence(monkeypatch, files):
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts the connection, never answers
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.setattr(remote, "TIMEOUT_S", 0.5)
    monkeypatch.setattr(remote, "RETRIES", 1)
    stop = threading.Event()
    try:
        with pytest.raises(HubError, match="kept dropping|Could not reach"):
            remote.read_remote_header(REPO, client.HubFile("tiny-Q8_0.gguf", 1 << 20, "0" * 64))
    finally:
        stop.set()
        listener.close()
