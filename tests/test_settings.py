"""core/settings.py: versioned JSON, atomic writes, corrupt files set aside and reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draftwise.core import settings as st


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


def test_missing_file_gives_defaults_without_problem(cfg: Path) -> None:
    r = st.load()
    assert r.path == cfg / "settings.json"
    assert r.problem is None and r.set_aside is None
    assert r.settings == st.Settings()
    assert r.settings.language == "system" and r.settings.port == 8080


def test_round_trip_keeps_everything(cfg: Path) -> None:
    s = st.Settings()
    s.add_folder("/models/a")
    assert not s.add_folder("/models/a"), "a folder is listed once"
    s.model_files = ["/x/loose.gguf"]
    s.last_model = "/models/a/m.gguf"
    s.set_overrides("/models/a/m.gguf", st.ModelOverrides(context=8192, kv_type="q8_0", mtp="off",
                                                          extra_args=["--spec-draft-n-max", "4"]))
    s.save_profile("long", st.ModelOverrides(context=65536))
    s.language = "ja"
    s.geometry = "AAAA"
    s.logs_visible = True
    path = st.save(s)
    assert path == cfg / "settings.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == st.SCHEMA_VERSION
    back = st.load().settings
    assert back.model_folders == ["/models/a"]
    assert back.model_files == ["/x/loose.gguf"]
    assert back.overrides_for("/models/a/m.gguf") == st.ModelOverrides(8192, "q8_0", "off", None, ["--spec-draft-n-max", "4"])
    assert back.profile("long").overrides.context == 65536
    assert back.language == "ja" and back.geometry == "AAAA" and back.logs_visible is True


def test_save_is_atomic_and_leaves_no_temporary_files(cfg: Path) -> None:
    st.save(st.Settings(port=9000))
    st.save(st.Settings(port=9001))
    assert sorted(p.name for p in cfg.iterdir()) == ["settings.json"]
    assert st.load().settings.port == 9001


def test_save_into_an_unwritable_place_raises_oserror(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError):
        st.save(st.Settings(), blocker / "settings.json")


@pytest.mark.parametrize(
    "content, why",
    [
        (b"{ this is not json", "not valid JSON"),
        (b"[1, 2, 3]", "does not hold a settings object"),
        (b"\xff\xfe\x00garbage", "not text"),
    ],
)
def test_corrupt_file_is_set_aside_and_reported(cfg: Path, content: bytes, why: str) -> None:
    cfg.mkdir(parents=True)
    path = cfg / "settings.json"
    path.write_bytes(content)
    r = st.load(now=1_700_000_000)
    assert r.settings == st.Settings()
    assert r.set_aside is not None and r.set_aside.name.startswith("settings.json.corrupt-")
    assert r.set_aside.read_bytes() == content, "the damaged file is kept, not deleted"
    assert not path.exists()
    assert why in r.problem and r.set_aside.name in r.problem and "defaults" in r.problem
    # A second corrupt file in the same second gets its own name.
    path.write_bytes(content)
    r2 = st.load(now=1_700_000_000)
    assert r2.set_aside != r.set_aside and r2.set_aside.exists()


def test_wrong_field_types_fall_back_one_by_one(cfg: Path) -> None:
    cfg.mkdir(parents=True)
    (cfg / "settings.json").write_text(json.dumps({
        "version": 1, "model_folders": ["/ok", 3, None], "port": "eighty", "language": "klingon",
        "overrides": {"/m.gguf": {"context": -5, "kv_type": 7, "mtp": "sometimes", "extra_args": ["-ngl", 9]},
                      "/n.gguf": "nonsense"},
        "profiles": [{"name": ""}, {"name": "fast", "overrides": {"mtp": "off"}}, 12],
        "logs_visible": "yes", "close_action": "tray",
    }))
    r = st.load()
    assert r.problem is None and r.set_aside is None
    s = r.settings
    assert s.model_folders == ["/ok"]
    assert s.port == 8080 and s.language == "system" and s.logs_visible is False
    assert s.close_action == "tray"
    assert s.overrides_for("/m.gguf").extra_args == ["-ngl"]
    assert s.overrides_for("/m.gguf").context is None
    assert "/n.gguf" not in s.overrides
    assert [p.name for p in s.profiles] == ["fast"]


def test_unknown_keys_survive_and_newer_versions_are_noted(cfg: Path) -> None:
    cfg.mkdir(parents=True)
    (cfg / "settings.json").write_text(json.dumps({"version": 99, "port": 8181, "future_thing": {"a": 1}}))
    r = st.load()
    assert r.settings.port == 8181
    assert r.problem and "newer Draftwise" in r.problem
    assert r.set_aside is None
    st.save(r.settings)
    data = json.loads((cfg / "settings.json").read_text())
    assert data["future_thing"] == {"a": 1}


def test_empty_overrides_are_not_stored() -> None:
    s = st.Settings()
    s.set_overrides("/m.gguf", st.ModelOverrides(context=4096))
    assert s.overrides
    s.set_overrides("/m.gguf", st.ModelOverrides())
    assert not s.overrides
    o = s.overrides_for("/other.gguf")
    o.context = 1
    assert s.overrides_for("/other.gguf").context is None, "overrides_for returns a copy"


def test_folders_and_profiles_edit() -> None:
    s = st.Settings()
    assert s.add_folder("/a") and s.add_folder("/b")
    assert s.remove_folder("/a") and not s.remove_folder("/a")
    assert s.model_folders == ["/b"]
    s.save_profile("p", st.ModelOverrides(kv_type="q8_0"))
    s.save_profile("p", st.ModelOverrides(kv_type="q4_0"))
    assert len(s.profiles) == 1 and s.profile("p").overrides.kv_type == "q4_0"
    s.delete_profile("p")
    assert s.profile("p") is None
