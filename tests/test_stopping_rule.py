"""A schedule's stopping rule around a search callback (gto.engine._stopping): judged
only at multiples of its period, the caller's callback asked otherwise, and only an
end the rule caused reported as a completed run."""
from types import SimpleNamespace

import gto
from gto.engine._stopping import StoppingRule


def _rule(user_stops_at=None, rule_stops_at=None, every=4):
    asked, judged = [], []

    def user(iteration, walker, value):
        asked.append(iteration)
        return iteration == user_stops_at

    def judge(iteration, walker):
        judged.append(iteration)
        return "enough" if iteration == rule_stops_at else None

    return StoppingRule(user, every, judge), asked, judged


def _run(rule, moves):
    """A search loop calling back after each move until told to stop."""
    for iteration in range(1, moves + 1):
        if rule(iteration, None, 0.0):
            return iteration
    return moves


def test_rule_judged_at_multiples_and_user_asked_otherwise():
    rule, asked, judged = _rule(rule_stops_at=8)
    assert _run(rule, 20) == 8
    assert judged == [4, 8]
    assert asked == [1, 2, 3, 4, 5, 6, 7]
    assert rule.reason == "enough"


def test_only_the_rule_s_end_is_a_completed_run():
    """The rule's stop: completed, with its reason; the caller's stop, a time limit that
    came first, or no stop at all: as the search said."""
    cases = ((None, 8, gto.Status.CALLBACK, gto.Status.COMPLETED),
             (6, 8, gto.Status.CALLBACK, gto.Status.CALLBACK),
             (None, 8, gto.Status.TIME_LIMIT, gto.Status.TIME_LIMIT),
             (None, None, gto.Status.ITERATION_LIMIT, gto.Status.ITERATION_LIMIT))
    for user_at, rule_at, searched, status in cases:
        rule, _, _ = _rule(user_stops_at=user_at, rule_stops_at=rule_at)
        if searched != gto.Status.TIME_LIMIT:
            _run(rule, 20)
        else:  # out of time before the rule's check, which later code still sees
            rule.reason = "enough"
        result = SimpleNamespace(status=searched, message="")
        rule.settle(result)
        assert result.status == status
        assert (result.message == "enough") == (status == gto.Status.COMPLETED)


def test_callback_every_divides_the_period():
    rule, _, _ = _rule(every=16)
    assert rule.options({})["callback_every"] == 16
    assert rule.options({"callback_every": 12, "x": 1}) == {"callback_every": 4, "x": 1}
    assert rule.options({"callback_every": 1})["callback_every"] == 1
