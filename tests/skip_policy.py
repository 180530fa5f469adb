"""Under DRAFTWISE_REQUIRE_ENGINE=1 (CI, `make test`) a skipped test is a failed test.

A skip that nobody reads is a test that silently stopped running: a missing engine, an
unpacked source that moved, a packaging tool that was never installed. Where everything a
test needs is meant to be present, a skip says something is missing, so it fails — except
for the few tests below that cannot run in such a place by design. Loaded by conftest.py
(`pytest_plugins`); tests/test_skip_policy.py runs it on its own tests.
"""

from __future__ import annotations

import os
import re

import pytest

REQUIRE_ENV = "DRAFTWISE_REQUIRE_ENGINE"

# "file::test" (parameters stripped) -> why this test may skip even where everything is set up.
ALLOWED_SKIPS: dict[str, str] = {
    "test_gguf_reader.py::test_permission_denied":
        "root reads any file, so a run as root cannot see a permission error",
    "test_packaging.py::test_frozen_onedir_builds_and_passes_its_self_test":
        "the PyInstaller build is opt-in (DRAFTWISE_PACKAGING_TESTS=1, `make package`)",
    "test_corpus_recorded.py::test_the_rows_recorded_on_a_real_gpu":
        "no NVIDIA rows are recorded until bench/cuda_check.py runs on a lent GPU (issue 39); "
        "each tests/data/engine-lines/cuda-*/ folder it writes becomes one case",
}


_PARAMS = re.compile(r"\[.*\]$")


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


def allow_key(nodeid: str) -> str:
    """`tests/test_x.py::test_y[param]` -> `test_x.py::test_y`."""
    path, _, name = nodeid.partition("::")
    return f"{path.rsplit('/', 1)[-1]}::{_PARAMS.sub('', name)}"


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _refuse(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not (report.skipped and required()) or hasattr(report, "wasxfail"):
        return
    if allow_key(report.nodeid) in ALLOWED_SKIPS:
        return
    report.outcome = "failed"
    report.longrepr = (
        f"{report.nodeid} was skipped ({_reason(report)}), but {REQUIRE_ENV}=1 says everything "
        "it needs is here; install what is missing, or add the test to ALLOWED_SKIPS in "
        "tests/skip_policy.py with the reason it cannot run here."
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    _refuse(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    # A module-level importorskip skips the whole file at collection.
    report = yield
    _refuse(report)
    return report
