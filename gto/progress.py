"""A small progress bar on stderr: count, percentage, rate and ETA.

No dependency.  The bar draws only when its stream is a terminal (or when
``force=True``) and never when ``quiet=True``; it redraws at most every
``min_interval`` seconds, so ticking it in a tight loop costs little.

    with Progress(total=100, desc="folds") as bar:
        for _ in range(100):
            bar.update()
"""
from __future__ import annotations

import sys
import time

WIDTH = 24


def _clock(seconds):
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


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
        self.min_interval = min_interval
        self.count = 0
        self.note = ""
        self._start = time.monotonic()
        self._last_draw = -float("inf")
        self._width = 0

    def update(self, n=1, note=None):
        self.set(self.count + n, note)

    def set(self, count, note=None):
        self.count = count
        if note is not None:
            self.note = note
        if self.enabled:
            now = time.monotonic()
            if now - self._last_draw >= self.min_interval or count == self.total:
                self._draw(now)

    def line(self, now=None):
        """The text of the bar as it would be drawn now."""
        elapsed = (time.monotonic() if now is None else now) - self._start
        rate = self.count / elapsed if elapsed > 0 else 0.0
        parts = [self.desc] if self.desc else []
        if self.total:
            frac = min(self.count / self.total, 1.0)
            filled = int(WIDTH * frac)
            parts.append("[" + "#" * filled + "." * (WIDTH - filled) + "]")
            parts.append(f"{self.count}/{self.total} {100 * frac:3.0f}%")
        else:
            parts.append(f"{self.count}")
        parts.append(f"{rate:.3g}/s" if rate < 1000 else f"{rate:.0f}/s")
        parts.append(_clock(elapsed))
        if self.total and 0 < self.count < self.total and rate > 0:
            parts.append(f"ETA {_clock((self.total - self.count) / rate)}")
        if self.note:
            parts.append(self.note)
        return "  ".join(parts)

    def _draw(self, now):
        text = self.line(now)
        pad = " " * max(self._width - len(text), 0)
        self.stream.write("\r" + text + pad)
        self.stream.flush()
        self._width = len(text)
        self._last_draw = now

    def close(self):
        """Draw the final state and end the line."""
        if self.enabled:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
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
