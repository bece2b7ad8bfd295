import io

import numpy as np

import gto
import problems
from gto.progress import Progress


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_draws_count_percent_rate_and_eta_on_a_terminal():
    out = TTY()
    bar = Progress(total=10, desc="folds", stream=out, min_interval=0)
    bar.update(4)
    text = out.getvalue()
    assert text.startswith("\rfolds") and "4/10" in text and "40%" in text
    assert "/s" in text and "ETA" in text
    bar.close()
    assert out.getvalue().endswith("\n") and bar.enabled is False


def test_silent_when_quiet_or_not_a_terminal_unless_forced():
    for stream, kwargs in ((TTY(), {"quiet": True}), (io.StringIO(), {})):
        with Progress(total=3, stream=stream, min_interval=0, **kwargs) as bar:
            bar.update(3)
        assert stream.getvalue() == ""
    forced = io.StringIO()
    with Progress(total=3, stream=forced, force=True, min_interval=0) as bar:
        bar.update(3)
    assert "3/3 100%" in forced.getvalue()
    quiet_forced = io.StringIO()
    with Progress(total=3, stream=quiet_forced, force=True, quiet=True) as bar:
        bar.update(3)
    assert quiet_forced.getvalue() == ""


def test_throttles_redraws():
    out = TTY()
    bar = Progress(total=1000, stream=out, min_interval=60)
    for _ in range(999):
        bar.update()
    assert out.getvalue().count("\r") == 1  # first draw only; the rest within 60 s
    bar.update()
    assert out.getvalue().count("\r") == 2  # reaching the total always draws


def test_unknown_total_shows_count_without_eta():
    bar = Progress(total=None, desc="moves", stream=TTY())
    bar.update(7)
    line = bar.line()
    assert "moves  7  " in line and "ETA" not in line and "%" not in line


def test_iteration_callback_follows_optimize_and_never_stops_it():
    X, y = problems.load("liver")
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    out = TTY()
    bar = Progress(total=200, stream=out, min_interval=0)
    calls = []
    inner = bar.iteration_callback()

    def callback(iteration, walker, value):
        calls.append(iteration)
        return inner(iteration, walker, value)

    res = gto.optimize(tree, X, y, max_iter=200, random_state=0, callback=callback)
    assert res.nit == 200 and len(calls) >= 200
    draws = out.getvalue().count("\r")
    assert 2 <= draws <= 110  # about one draw per 1 % of the iterations
    assert "best" in out.getvalue()
    assert np.isfinite(res.fun)
