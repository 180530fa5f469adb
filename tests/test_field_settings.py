"""An MTP head starts with the draft length and p-min reported for its family, until a
measurement decides; a user's own setting is never doubled."""

from __future__ import annotations

from draftwise.core.speculation import field_settings
from draftwise.core.speculation.setup import drafter_flags


def test_qwen35_mtp_starts_at_the_reported_length_and_p_min():
    for arch in ("qwen35", "qwen35moe"):
        argv, note = field_settings.mtp_argv(arch, ())
        assert argv == ("--spec-draft-n-max", "3", "--spec-draft-p-min", "0.75")
        assert note is not None and "until Draftwise measures it here" in str(note)


def test_an_architecture_without_a_report_keeps_the_engine_defaults():
    assert field_settings.mtp_argv("glm4moe", ()) == ((), None)


def test_the_users_own_setting_is_left_to_them():
    for extra in (("--spec-draft-p-min", "0.5"), ("--spec-draft-n-max=2",), ("--draft-p-min", "0.1")):
        assert field_settings.mtp_argv("qwen35", extra) == ((), None)


def test_a_measured_setup_replaces_the_field_settings():
    """What prepare hands a measured setup: the decision's flags without lengths and p-min."""
    argv, _ = field_settings.mtp_argv("qwen35", ())
    assert drafter_flags(("--spec-type", "draft-mtp", *argv)) == ()
