"""`viewmodels.latest.Latest`: only the answer to the newest request is used."""

from __future__ import annotations

from draftwise.viewmodels.latest import Latest


def test_an_answer_to_an_older_request_is_dropped():
    latest = Latest()
    got: list[str] = []
    first = latest.deliver(got.append, latest.new())
    second = latest.deliver(got.append, latest.new())
    second("new")
    first("old")  # arrives last, answers an older question
    assert got == ["new"]


def test_a_request_made_after_the_call_makes_it_stale():
    latest = Latest()
    latest.new()
    got: list[int] = []
    answer = latest.deliver(got.append)  # bound to the newest request now
    latest.new()
    answer(1)
    assert got == []
    assert latest.is_current(latest.current) and not latest.is_current(latest.current - 1)
