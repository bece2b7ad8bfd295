"""A stopping rule of the schedule around a search's callback.

Some runs end on a rule of the caller's, not of the search: a polish run whose fewest
errors lag too far behind the incumbent (the race of :func:`._portfolio._tabu_round`),
the full-data walk that stops making progress (its patience, in
:mod:`gto.learners._optimize`).  Each is a callback that says stop, judged only at
multiples of ``every`` moves.  The compiled EPTS loop calls back at multiples of its
``callback_every``, so that is set to a divisor of ``every``: where the run ends then
does not depend on how the loop's chunks fell, and runs stay reproducible.

Such an end is a completed run, not a stop by the caller: :meth:`StoppingRule.settle`
turns the search's ``CALLBACK`` status into ``COMPLETED`` with the rule's reason.
"""
from __future__ import annotations

import math

from ..utils.status import Status


class StoppingRule:
    """``judge(iteration, walker)`` every ``every`` moves around ``callback``.

    ``judge`` returns the reason to stop (a message) or None to go on; the caller's
    ``callback``, if any, is asked on every call the rule lets through.
    """

    def __init__(self, callback, every, judge):
        self.user, self.every, self.judge = callback, every, judge
        self.reason = None

    def __call__(self, iteration, walker, value):
        if iteration % self.every == 0:
            reason = self.judge(iteration, walker)
            if reason is not None:
                self.reason = reason
                return True
        return bool(self.user(iteration, walker, value)) if self.user is not None else False

    def options(self, search_options):
        """The search's options with ``callback_every`` a divisor of ``every``."""
        every = math.gcd(self.every, search_options.get("callback_every", self.every))
        return {**search_options, "callback_every": every}

    def settle(self, result):
        """Mark ``result`` (a search or restart result) completed if this rule ended it."""
        if self.reason is not None and result.status == Status.CALLBACK:
            result.status, result.message = Status.COMPLETED, self.reason
        return result
