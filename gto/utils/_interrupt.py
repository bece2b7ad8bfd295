"""Ctrl-C as a stop request that the searches check between iterations.

A KeyboardInterrupt raised in the middle of a numba call can leave the
interpreter in a bad state (``SystemError``) and loses the run.  While a fit
runs, :func:`stop_on_sigint` replaces Python's default SIGINT handler by one
that only records the request (:class:`StopRequest`); the tabu and
Frank-Wolfe loops poll it through their callbacks and stop at the next
iteration with the best solution so far.  Worker processes see the request
through a small marker file (the terminal's Ctrl-C reaches them too; then
their own handler records it).
"""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
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
