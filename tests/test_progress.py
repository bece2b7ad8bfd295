import io
import logging
import time

import numpy as np

import gto
import problems
from gto.utils._progress import Progress


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_draws_count_percent_and_rate_on_a_terminal():
    out = TTY()
    bar = Progress(total=10, desc="folds", stream=out, min_interval=0)
    bar.update(1)
    bar.update(3)
    text = out.getvalue()
    assert "folds" in text and "4/10" in text and "40%" in text and "it/s" in text
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
    assert "3/3" in forced.getvalue() and "100%" in forced.getvalue()
    quiet_forced = io.StringIO()
    with Progress(total=3, stream=quiet_forced, force=True, quiet=True) as bar:
        bar.update(3)
    assert quiet_forced.getvalue() == ""


def test_slow_set_up_does_not_inflate_the_first_eta():
    """A 1 s set-up (compilation) before 1 000 quick steps of 10 000: the ETA is the
    remaining steps at the stepping rate, seconds, not 9 000 s at 1 step per second."""
    bar = Progress(total=10_000, stream=TTY(), min_interval=0)
    time.sleep(1.0)
    tick = bar.iteration_callback()  # as the command line uses it: a tick per 1 %
    start = time.perf_counter()
    for i in range(1000):
        tick(i, None, 1.0)
    per_step = (time.perf_counter() - start) / 1000
    assert bar.eta is not None and bar.eta < max(50 * per_step * 9000, 0.5)
    bar.close()


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
    assert res.nit == 200 and len(calls) >= 200  # a caller's callback sees every move
    draws = out.getvalue().count("\r")
    assert 2 <= draws <= 110  # about one draw per 1 % of the iterations
    assert "best" in out.getvalue()
    assert np.isfinite(res.fun)


def test_verbose_optimize_draws_a_bar_and_logs_each_restart(capsys, caplog):
    X, y = problems.load("liver")
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    res = gto.optimize(tree, X, y, max_iter=50, restarts=2, random_state=0)
    assert capsys.readouterr().err == ""  # silent by default
    with caplog.at_level(logging.INFO, logger="gto"):
        res = gto.optimize(tree, X, y, max_iter=50, restarts=2, random_state=0, verbose=2)
    err = capsys.readouterr().err
    assert "gto.optimize" in err and "100/100" in err
    lines = [r.getMessage() for r in caplog.records if r.name == "gto"]
    assert len(lines) == 2 and lines[1].startswith("restart 2/2 (cart start)")  # the portfolio
    assert f"{res.restarts[1]['n_errors']:g} errors" in lines[1]
    clf = gto.GTOClassifier(alpha=0.0, restarts=1, max_iter=30, random_state=0, verbose=1).fit(X, y)  # one search
    assert "gto.optimize" in capsys.readouterr().err and clf.n_iter_ == 30
