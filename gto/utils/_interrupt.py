"""Ctrl-C as a stop request that the searches check between iterations.

A KeyboardInterrupt raised in the middle of a numba call can leave the
interpreter in a bad state (``SystemError``) and loses the run.  While a fit
runs, :func:`stop_on_sigint` replaces Python's default SIGINT handler by one
that only records the request (:class:`StopRequest`); the tabu and
Frank-Wolfe loops poll it through their callbacks and stop at the next
iteration with the best solution so far.  Worker processes see the request
through a small marker file (the terminal's Ctrl-C reaches them too; then
their own handler records it).

The phases before and between the searches (the starts' LPs, the crossover,
the refits) have no callback: :func:`limits` makes a deadline and a stop
request known to them for the duration of a restart, and
:func:`check_limits` - called between pivots and purification steps - raises
:class:`OutOfTime` once either has passed.  Each phase catches it and falls
back to what it has (a mean split instead of an LP, the best tree so far).
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import tempfile
import threading
import time
import uuid


class StopRequest:
    """A stop flag shared with worker processes through a marker file."""

    def __init__(self):
        self.path = os.path.join(tempfile.gettempdir(), f"gto-stop-{uuid.uuid4().hex}")
        self._set = False
        self._polls = 0

    def set(self):
        self._set = True
        try:
            with open(self.path, "x"):
                pass
        except OSError:
            pass  # already there, or no temporary folder: this process still knows

    def is_set(self, every=1):
        """True once a stop was requested; the marker file is looked at every ``every`` calls."""
        if self._set:
            return True
        self._polls += 1
        if self._polls % every == 0 and os.path.exists(self.path):
            self._set = True
        return self._set

    def __getstate__(self):  # a worker starts with its own flag and poll count
        return {"path": self.path}

    def __setstate__(self, state):
        self.path, self._set, self._polls = state["path"], False, 0

    def cleanup(self):
        with contextlib.suppress(OSError):
            os.unlink(self.path)


@contextlib.contextmanager
def stop_on_sigint(stop):
    """Within the block, SIGINT calls ``stop.set()`` instead of raising KeyboardInterrupt.

    Only in the main thread and only over Python's default handler (a
    handler the user installed is left alone).
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield stop
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


class OutOfTime(Exception):
    """The deadline of :func:`limits` passed or its stop was requested (internal: the
    phase that checks ends early and a caller falls back to the best so far)."""


_LIMITS = contextvars.ContextVar("gto_limits", default=(None, None))


@contextlib.contextmanager
def limits(deadline=None, stop=None):
    """Within the block, :func:`check_limits` raises :class:`OutOfTime` after the wall
    clock ``deadline`` (``time.time()`` seconds, None: none) or once ``stop``
    (:class:`StopRequest`) is set.  Nested blocks keep the earlier deadline."""
    outer_deadline, outer_stop = _LIMITS.get()
    if outer_deadline is not None:
        deadline = outer_deadline if deadline is None else min(deadline, outer_deadline)
    token = _LIMITS.set((deadline, stop if stop is not None else outer_stop))
    try:
        yield
    finally:
        _LIMITS.reset(token)


def limits_passed(every=16):
    """True once the deadline of the enclosing :func:`limits` passed or its stop was
    requested (the stop's marker file is looked at every ``every`` calls)."""
    deadline, stop = _LIMITS.get()
    return (deadline is not None and time.time() > deadline) or (
        stop is not None and stop.is_set(every=every))


def stop_requested():
    """True if the stop of the enclosing :func:`limits` was requested (not only its
    deadline passed): an :class:`OutOfTime` then reports an interruption."""
    _, stop = _LIMITS.get()
    return stop is not None and stop.is_set()


def work_per_check(rows, least, rows_times_work, most=256):
    """Units of work (steps, passes) between two :func:`check_limits` calls of a loop
    over ``rows`` rows: ``least``, doubled while the work times the rows stays within
    ``rows_times_work``, at most ``most``: small problems make fewer calls, large
    ones are still checked after ``least``."""
    work = least
    while 2 * work * rows <= rows_times_work and work < most:
        work *= 2
    return work


def check_limits(every=16):
    """Raise :class:`OutOfTime` if :func:`limits_passed`."""
    if limits_passed(every):
        raise OutOfTime("the time limit passed or a stop was requested")
