"""Progress bars (tqdm, so they also work in notebooks) and the library's logger.

:class:`Progress` is a thin wrapper over ``tqdm.auto.tqdm`` with the switches
the command line needs: it draws only when its stream is a terminal (or
``force=True``) and never when ``quiet=True``.  Its clock starts at the first
tick, so set-up time (one-time compilation, the starting LP) does not make
the first ETA read minutes for a run of a second.

    with Progress(total=100, desc="folds") as bar:
        for _ in range(100):
            bar.update()

Library messages go to the ``logging`` logger ``"gto"`` (:data:`logger`);
``verbose=`` on :func:`gto.optimize` and ``GTOClassifier`` shows a bar and
the per-restart messages (docs/DESIGN.md §9).
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys

from tqdm.auto import tqdm

logger = logging.getLogger("gto")


def _size_fallback(stream):
    """A width for terminals that report a size of 0 (tqdm would then draw nothing)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return {}
    return {} if size.columns and size.lines else {"ncols": 100, "nrows": 20}


class Progress:
    """Progress over ``total`` steps (``None``: unknown total, no bar or ETA).

    ``update(n)`` adds n steps, ``set(count)`` jumps to a count; ``note``
    is a short text shown after the numbers (e.g. the best value so far).
    """

    def __init__(self, total=None, desc="", *, quiet=False, force=False, stream=None,
                 min_interval=0.1):
        self.total = total
        self.desc = desc
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", lambda: False)()
        self.enabled = not quiet and (force or isatty)
        self.count = 0
        self.note = ""
        self._ticked = False
        self._bar = tqdm(total=total, desc=desc or None, file=self.stream,
                         disable=not self.enabled, mininterval=min_interval,
                         leave=True, **_size_fallback(self.stream))

    def _start_clock(self):
        """Restart tqdm's clock at the first tick (set-up time is not progress)."""
        if not self._ticked:
            self._ticked = True
            if self.enabled:
                now = self._bar._time()
                self._bar.start_t = self._bar.last_print_t = now

    def update(self, n=1, note=None):
        self.set(self.count + n, note)

    def set(self, count, note=None):
        first = not self._ticked
        self._start_clock()
        if note is not None and note != self.note:
            self.note = note
            self._bar.set_postfix_str(note, refresh=False)
        step = count - self.count
        self.count = count
        if self.enabled and step:
            if first:  # a jump before the clock ran: no rate from it
                self._bar.n = self._bar.last_print_n = count
                self._bar.refresh()
            else:
                self._bar.update(step)

    @property
    def eta(self):
        """Seconds still to go at the current rate (None when unknown)."""
        d = self._bar.format_dict
        rate = d.get("rate") or (d["n"] / d["elapsed"] if d["elapsed"] > 0 else None)
        if not self.total or not rate or self.count == 0:
            return None
        return (self.total - self.count) / rate

    def line(self):
        """The text of the bar as it would be drawn now."""
        return tqdm.format_meter(**self._bar.format_dict)

    def close(self):
        """Draw the final state and end the line."""
        self._bar.close()
        self.enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def iteration_callback(self, offset=0, step=None):
        """A ``gto.optimize`` callback that moves the bar to ``offset + iteration``.

        It redraws only every ``step`` iterations (1 % of the total by
        default), so the per-iteration cost is one comparison.  It never asks
        the optimiser to stop.
        """
        step = step or max(1, (self.total or 100) // 100)
        next_tick = [0]

        def callback(iteration, walker, value):
            if iteration >= next_tick[0]:
                next_tick[0] = iteration + step
                self.set(offset + iteration, f"best {value:.4g}")
            return False

        return callback


class _TqdmHandler(logging.Handler):
    """Log lines printed above any progress bar instead of through it."""

    def emit(self, record):
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 (logging must never raise)
            self.handleError(record)


@contextlib.contextmanager
def verbose_logging(verbose):
    """With ``verbose >= 2`` and no logging set up, show the ``"gto"`` INFO messages on stderr."""
    handler = None
    if verbose >= 2 and not logger.hasHandlers():
        handler = _TqdmHandler()
        handler.setFormatter(logging.Formatter("gto: %(message)s"))
        logger.addHandler(handler)
        old_level = logger.level
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        if handler is not None:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
