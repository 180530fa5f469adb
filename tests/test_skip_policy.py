"""The skip policy itself: under DRAFTWISE_REQUIRE_ENGINE=1 a skip fails unless allow-listed."""

from __future__ import annotations

import pytest

import skip_policy

pytest_plugins = ("pytester",)

# A module with one allow-listed skip and three that are not: in the body, by a skipif
# mark, and by a fixture (the way the engine fixture skips).
TESTS = '''
import pytest

@pytest.fixture
def needs_something():
    pytest.skip("something is not installed")

def test_permission_denied():
    pytest.skip("root reads anything")

def test_body_skip():
    pytest.skip("the pinned source is not unpacked")

@pytest.mark.skipif(True, reason="makensis not installed")
def test_marked_skip():
    pass

def test_fixture_skip(needs_something):
    pass

@pytest.mark.xfail(reason="a known bug is not a skip")
def test_expected_failure():
    assert False

def test_passes():
    pass
'''


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, required: str | None):
    # Its own name (a second test_gguf_reader module would clash with the real one).
    monkeypatch.setitem(skip_policy.ALLOWED_SKIPS, "test_policy_sample.py::test_permission_denied",
                        "root reads any file (the sample's copy of the real entry)")
    if required is None:
        monkeypatch.delenv(skip_policy.REQUIRE_ENV, raising=False)
    else:
        monkeypatch.setenv(skip_policy.REQUIRE_ENV, required)
    pytester.makepyfile(test_policy_sample=TESTS)
    return pytester.runpytest_inprocess("-p", "skip_policy", "-p", "no:cacheprovider", "-rA")


def test_skips_fail_when_everything_is_required(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "1")
    result.assert_outcomes(passed=1, skipped=1, failed=1, errors=2, xfailed=1)
    out = result.stdout.str()
    # The allow-listed one stays a skip; each other one fails and says why it was skipped.
    assert "SKIPPED [1] test_policy_sample.py" in out and "root reads anything" in out
    for reason in ("the pinned source is not unpacked", "makensis not installed", "something is not installed"):
        assert reason in out
    # Each of the three says where to allow it (read from the reports: how much of it the
    # short summary repeats depends on the terminal and on CI=true).
    saying = {r.nodeid for r in result.reprec.getreports("pytest_runtest_logreport")
              if r.failed and "ALLOWED_SKIPS in tests/skip_policy.py" in str(r.longrepr)}
    assert saying == {"test_policy_sample.py::test_body_skip", "test_policy_sample.py::test_marked_skip",
                      "test_policy_sample.py::test_fixture_skip"}


@pytest.mark.parametrize("required", [None, "0"])
def test_skips_stay_skips_otherwise(pytester, monkeypatch, required):
    result = _run(pytester, monkeypatch, required)
    result.assert_outcomes(passed=1, skipped=4, xfailed=1)


def test_a_module_skipped_at_collection_fails_too(pytester, monkeypatch):
    monkeypatch.setenv(skip_policy.REQUIRE_ENV, "1")
    pytester.makepyfile(test_needs_a_module='import pytest\npytest.importorskip("no_such_module_here")\n')
    result = pytester.runpytest_inprocess("-p", "skip_policy", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "no_such_module_here" in result.stdout.str()


def test_allow_list_is_short_and_says_why():
    assert len(skip_policy.ALLOWED_SKIPS) <= 3
    assert all(len(why) > 20 for why in skip_policy.ALLOWED_SKIPS.values())
    assert skip_policy.allow_key("tests/test_packaging.py::test_frozen_onedir_builds_and_passes_its_self_test") \
        in skip_policy.ALLOWED_SKIPS
    assert skip_policy.allow_key("tests/test_x.py::test_y[a-b]") == "test_x.py::test_y"
