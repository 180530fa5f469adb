"""Getting models from the hub: the real huggingface_hub client against a loopback stand-in."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections import namedtuple

import pytest

from draftwise.core.hub import client, download, files
from draftwise.core.hub.client import HubError
from draftwise.core.machine.hardware import GB, Gpu, Machine

BODY = bytes(range(256)) * 4096  # 1 MiB, not a real model: the transfer is what is tested


def _one(hub, name="org/Tiny-GGUF", path="tiny-Q4_K_M.gguf", **faults):
    hub.add_file(name, path, BODY, **faults)
    return client.list_models(name)[0]


def test_search_lists_gguf_repositories_most_downloaded_first(hub):
    hub.add_file("org/Small-GGUF", "s.gguf", b"x")
    hub.add_file("org/Big-GGUF", "b.gguf", b"x")
    hub.repos["org/Big-GGUF"].downloads = 10
    assert [h.repo for h in client.search("gguf")] == ["org/Big-GGUF", "org/Small-GGUF"]


def test_listing_groups_shards_names_quants_and_tags_drafters(hub):
    for i in (1, 2, 3):
        hub.add_file("org/M-GGUF", f"Q8_0/m-Q8_0-0000{i}-of-00003.gguf", b"abc")
    hub.add_file("org/M-GGUF", "m-Q4_K_M.gguf", b"abcd")
    hub.add_file("org/M-GGUF", "mmproj-m-f16.gguf", b"ab")
    hub.add_file("org/M-GGUF", "m-draft-Q8_0.gguf", b"a")
    hub.add_file("org/M-GGUF", "README.md", b"hello")
    models = client.list_models("org/M-GGUF")
    by_name = {m.name: m for m in models}
    assert set(by_name) == {"m-Q8_0-00001-of-00003.gguf", "m-Q4_K_M.gguf", "m-draft-Q8_0.gguf"}
    sharded = by_name["m-Q8_0-00001-of-00003.gguf"]
    assert len(sharded.files) == 3 and sharded.size == 9 and sharded.quant == "Q8_0"
    assert by_name["m-Q4_K_M.gguf"].quant == "Q4_K_M"
    assert by_name["m-draft-Q8_0.gguf"].drafter and models[-1].drafter  # drafters listed last
    assert sharded.first.sha256 == hashlib.sha256(b"abc").hexdigest()


def test_incomplete_shard_set_is_not_offered():
    got = files.group_models("r", [files.HubFile("m-00001-of-00002.gguf", 1)])
    assert got == []


def test_download_lands_checked_in_the_library_folder(hub, tmp_path):
    model = _one(hub)
    seen = []
    path = download.download(model, tmp_path, progress=seen.append)
    assert path == tmp_path / "org" / "Tiny-GGUF" / "tiny-Q4_K_M.gguf"
    assert path.read_bytes() == BODY
    assert not download.part_path(path).exists()
    assert seen[-1].done == seen[-1].total == len(BODY)


def test_dropped_connection_resumes_where_it_stopped(hub, tmp_path, monkeypatch):
    monkeypatch.setattr(download, "RETRY_WAIT_S", 0.0)
    monkeypatch.setattr(download, "CHUNK", 64 * 1024)
    model = _one(hub, drop_after=300_000)
    path = download.download(model, tmp_path)
    assert path.read_bytes() == BODY
    first, second = hub.repos["org/Tiny-GGUF"].files["tiny-Q4_K_M.gguf"].requests
    assert first == "" and second.startswith("bytes=")
    assert 0 < int(second.removeprefix("bytes=").rstrip("-")) <= 300_000


def test_cancel_keeps_the_part_and_the_next_download_continues(hub, tmp_path, monkeypatch):
    monkeypatch.setattr(download, "CHUNK", 64 * 1024)
    model = _one(hub)
    chunks = iter(range(100))
    with pytest.raises(download.DownloadCancelled):
        download.download(model, tmp_path, cancelled=lambda: next(chunks) >= 3)
    final = download.destination(tmp_path, model)
    kept = download.part_path(final).stat().st_size
    assert 0 < kept < len(BODY) and not final.exists()
    assert download.download(model, tmp_path).read_bytes() == BODY
    requests = hub.repos["org/Tiny-GGUF"].files["tiny-Q4_K_M.gguf"].requests
    assert requests[-1] == f"bytes={kept}-"


def test_wrong_checksum_is_set_aside_with_a_sentence(hub, tmp_path):
    model = _one(hub, corrupt=True)
    with pytest.raises(HubError) as err:
        download.download(model, tmp_path)
    final = download.destination(tmp_path, model)
    assert "checksum does not match" in str(err.value) and err.value.field == "file"
    assert not final.exists()
    assert final.with_name(final.name + download.BAD_SUFFIX).is_file()


def test_full_disk_refuses_before_downloading(hub, tmp_path, monkeypatch):
    model = _one(hub)
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(download.shutil, "disk_usage", lambda _p: Usage(10 * GB, 10 * GB, 1000))
    with pytest.raises(HubError, match="Not enough disk space") as err:
        download.download(model, tmp_path)
    assert err.value.field == "folder"
    assert hub.repos["org/Tiny-GGUF"].files["tiny-Q4_K_M.gguf"].requests == []


def test_gated_repository_says_what_to_do_and_a_token_opens_it(hub, tmp_path, monkeypatch):
    hub.add_file("org/Gated-GGUF", "g.gguf", BODY)
    hub.repos["org/Gated-GGUF"].gated = True
    hub.token = "hf_secret"
    with pytest.raises(HubError, match="gated.*HF_TOKEN"):
        client.list_models("org/Gated-GGUF")
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    model = client.list_models("org/Gated-GGUF")[0]
    assert download.download(model, tmp_path).read_bytes() == BODY


def test_missing_repository_is_named(hub):
    with pytest.raises(HubError, match="org/Nope-GGUF was not found"):
        client.list_models("org/Nope-GGUF")


def test_unreachable_hub_is_one_sentence(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(HubError, match="Could not reach the model hub at http://127.0.0.1:9") as err:
        client.search("x")
    assert err.value.field == "network"


def test_fit_is_judged_from_the_file_size():
    gpu = Gpu(0, "cuda", "RTX", total_bytes=8 * GB, free_bytes=8 * GB)
    box = Machine(ram_total=32 * GB, ram_available=16 * GB, gpus=[gpu], described=True)
    assert files.judge_fit(4 * GB, box).level == "fits"
    assert files.judge_fit(12 * GB, box).level == "gpu-partly"
    assert files.judge_fit(30 * GB, box).level == "too-big"
    laptop = Machine(ram_total=8 * GB, ram_available=6 * GB, described=True)
    assert files.judge_fit(4 * GB, laptop).level == "fits"
    assert files.judge_fit(6 * GB, laptop).level == "too-big"


def test_cli_get_downloads_and_lists(hub, tmp_path, monkeypatch):
    from draftwise.testing import tinymodels as tm

    small = tm.write_tiny_model(tmp_path / "src" / "a.gguf", tm.TinyModel())[0]
    large = tm.write_tiny_model(tmp_path / "src" / "b.gguf", tm.TinyModel(n_layer=4))[0]
    hub.add_file("org/Tiny-GGUF", "tiny-Q4_K_M.gguf", small)
    hub.add_file("org/Tiny-GGUF", "tiny-Q8_0.gguf", large)
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "draftwise.cli.main", "get", *a],  # noqa: E731
                                    capture_output=True, text=True, timeout=120)
    box = tmp_path / "box.json"
    box.write_text('{"ram_gb": 16, "free_gb": 12}')
    listed = run("org/Tiny-GGUF", "--list", "--machine", str(box))
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert len(rows) == 2 and all("fits: context" in r and "planned" in r for r in rows), listed.stdout
    assert rows[0].startswith("tiny-Q4_K_M.gguf") and "Q8_0" in rows[1]
    got = run("org/Tiny-GGUF:tiny-Q8_0.gguf", "--to", str(tmp_path / "lib"), "--machine", str(box))
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "lib" / "org" / "Tiny-GGUF" / "tiny-Q8_0.gguf").read_bytes() == large.read_bytes()
    missing = run("org/Nope-GGUF", "--to", str(tmp_path / "lib"))
    assert missing.returncode == 2 and "org/Nope-GGUF was not found" in missing.stderr


def test_a_vision_repository_offers_its_f16_projector_and_it_lands_beside_the_model(hub, tmp_path):
    import threading

    from draftwise.viewmodels.get_models import op_fetch

    hub.add_file("org/V-GGUF", "v-Q4_K_M.gguf", BODY)
    hub.add_file("org/V-GGUF", "mmproj-F32.gguf", BODY + BODY)
    hub.add_file("org/V-GGUF", "mmproj-F16.gguf", BODY[:4096])
    hub.add_file("org/V-GGUF", "mmproj-BF16.gguf", BODY[:2048])
    models = client.list_models("org/V-GGUF")
    assert [m.name for m in models] == ["v-Q4_K_M.gguf"]  # the projectors are no models of their own
    assert models[0].projector is not None and models[0].projector.path == "mmproj-F16.gguf"
    assert files.pick_projector([files.HubFile("mmproj-x-Q8_0.gguf", 5), files.HubFile("mmproj-x-BF16.gguf", 9)]
                                ).path == "mmproj-x-BF16.gguf"  # fmt: skip
    assert files.pick_projector([files.HubFile("m.gguf", 5)]) is None
    got = op_fetch(models[0], tmp_path, None, report=lambda _p: None, cancel=threading.Event(), projector=True)
    assert got.projector == got.model.parent / "mmproj-F16.gguf"
    assert got.projector.read_bytes() == BODY[:4096]  # checked against the hub's sha256 on the way
    without = op_fetch(models[0], tmp_path / "b", None, report=lambda _p: None, cancel=threading.Event())
    assert without.projector is None and not (without.model.parent / "mmproj-F16.gguf").exists()
    # The CLI twin fetches it too, unless told not to.
    run = lambda *a: subprocess.run([sys.executable, "-m", "draftwise.cli.main", "get", *a],  # noqa: E731
                                    capture_output=True, text=True, timeout=120,
                                    env={**__import__("os").environ, "DRAFTWISE_CONFIG_DIR": str(tmp_path / "c"),
                                         "DRAFTWISE_DATA_DIR": str(tmp_path / "d")})  # fmt: skip
    got = run("org/V-GGUF:v-Q4_K_M.gguf", "--to", str(tmp_path / "cli"))
    assert got.returncode == 0, got.stderr
    assert "vision projector mmproj-F16.gguf" in got.stdout
    assert (tmp_path / "cli" / "org" / "V-GGUF" / "mmproj-F16.gguf").read_bytes() == BODY[:4096]
    bare = run("org/V-GGUF:v-Q4_K_M.gguf", "--to", str(tmp_path / "cli2"), "--no-projector")
    assert bare.returncode == 0 and not (tmp_path / "cli2" / "org" / "V-GGUF" / "mmproj-F16.gguf").exists()
