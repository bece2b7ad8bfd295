"""Reliability: nothing overwritten, limits that hold in every phase, bounded workers,
sizes refused up front, singular pivots refused, exact labels and weights, one-line errors.

CLI cases run through ``gto.cli._main.main`` in-process (or a subprocess where the shell
matters: pipes, closed descriptors); every case is checked against an independent truth
(the input's bytes, a literal tree walk, the text written).
"""
import gzip
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gto
from gto.cli import _files
from gto.cli._main import csv_safe, main
from gto.engine import _block, _crossover, _starts
from gto.engine._block import CHECK_EVERY, Block, DegeneratePivotError, SingularBlockError
from gto.engine._crossover import purify
from gto.engine._hinge_lp import solve_hinge_lp
from gto.engine._problem import TreeProblem, search_bytes
from gto.engine._walker import TreeWalker
from gto.model.inspection import printable
from gto.utils import _memory
from gto.utils._interrupt import OutOfTime, StopRequest, limits
from gto.utils._workers import capped_jobs

from truths import walk_errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = "/work/shared/cases/singular_pivot.csv"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err):
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("gto: error:") and "Traceback" not in err


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    path = tmp_path / "d.csv"
    path.write_text("u,v,class\n" + "".join(f"{p:.6f},{q:.6f},{c}\n" for (p, q), c in zip(X, y)))
    return path


@pytest.fixture
def model_json(tmp_path, data_csv, capsys):
    path = tmp_path / "m.json"
    assert run(capsys, "fit", data_csv, "--max-iter", "50", "-q", "-o", path)[0] == 0
    return path


# -- singular refactorisation after a pivot --------------------------------------------------
def _square_block(rng, n=3, T=12):
    rows = np.column_stack([rng.normal(size=(T, n)), -np.ones(T)]) * rng.choice([-1, 1], (T, 1))
    return Block(rows, np.arange(n + 1))


def _state(block):
    return {k: getattr(block, k).copy() for k in Block._STATE}


def test_a_pivot_whose_refactorisation_is_singular_is_refused_with_the_block_restored(
        monkeypatch):
    rng = np.random.default_rng(1)
    block = _square_block(rng)
    for q in range(block.m):  # a pivot that is allowed
        step, leave = block.ratio_test(q, 1.0)
        if leave >= 0:
            break
    block.updates = CHECK_EVERY - 1  # this pivot is followed by a residual check
    monkeypatch.setattr(_block, "RESIDUAL_TOL", -1.0)  # ... that asks for a refactorisation
    monkeypatch.setattr(_block, "MAX_COND", 0.5)  # ... that finds it singular (cond >= 1)
    before = _state(block)
    with pytest.raises(DegeneratePivotError):
        block.pivot(q, 1.0, leave)
    after = _state(block)
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)


def test_the_search_skips_a_refused_edge_and_goes_on(monkeypatch):
    """Every refactorisation during the search fails: each pivot followed by one is
    refused, its edge skipped, and EPTS still makes its moves (before: the error escaped).
    Python's driver, whose pivots refactorise through ``Block.refactorise``; the compiled
    loop's (the same kernel, compiled in) refuse alike (tests/test_tabu_loop.py)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    y = (X @ [1.0, -1.0, 0.5] > 0).astype(int)
    tree = gto.Tree.complete(2, [0, 1], 3)
    failing = {"n": 0, "blocks": set()}
    real = Block.refactorise

    def refactorise(self):  # the first refactorisation after pivots fails, in every block
        if getattr(self, "updates", 0) and id(self) not in failing["blocks"]:
            failing["n"] += 1
            failing["blocks"].add(id(self))
            raise SingularBlockError("tight triples are (nearly) affinely dependent")
        return real(self)

    monkeypatch.setattr(Block, "refactorise", refactorise)
    monkeypatch.setattr(_block, "RESIDUAL_TOL", -1.0)
    monkeypatch.setattr(TreeWalker, "compiled_loop", lambda self, *args: None)
    res = gto.optimize(tree, X, y, max_iter=300, random_state=0, options={"paper": True})
    assert failing["n"] > 0
    assert res.nit >= 250  # refusals skipped, not the end of the walk
    assert res.n_errors == np.sum(res.tree.predict(X) != y)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CASES), reason="regression data not here")
def test_singular_pivot_case_returns_a_tree():
    data = np.genfromtxt(CASES, delimiter=",", skip_header=1)
    X, y = data[:, :-1], data[:, -1].astype(int)
    res = gto.optimize(gto.Tree.complete(3, [0, 1, 2, 3, 4, 5, 6, 0], 19), X, y,
                       random_state=2, max_iter=3000)
    assert res.success and res.n_errors == np.sum(res.tree.predict(X) != y)
    model = gto.GTOClassifier(depth=3, random_state=0).fit(X, y)
    assert model.score(X, y) > 0.5


# -- limits inside the starts, the crossover and the refits --------------------------------
def _lp_rows(rng, N=60, n=4):
    X1 = np.column_stack([rng.normal(size=(N, n)), -np.ones(N)])
    side = np.where(X1[:, 0] > 0, 1.0, -1.0)
    return side[:, None] * X1, np.full(N, 1.0 / N)


def test_the_crossover_and_the_lp_stop_when_the_limits_pass():
    rng = np.random.default_rng(0)
    rows, cost = _lp_rows(rng)
    stop = StopRequest()
    stop.set()
    with limits(stop=stop), pytest.raises(OutOfTime):
        purify(rows, rng.normal(size=rows.shape[1]), cost, rng)
    block = purify(rows, rng.normal(size=rows.shape[1]), cost, rng)
    with limits(deadline=0.0), pytest.raises(OutOfTime):  # a deadline long past
        solve_hinge_lp(block, cost)
    stop.cleanup()


@pytest.mark.parametrize("dep_rtol", [_crossover.DEP_RTOL, 0.0])
def test_pausing_for_the_limits_does_not_change_the_purification(monkeypatch, dep_rtol):
    """purify_steps pauses every STEPS_PER_CHECK steps for check_limits and resumes
    where it paused: the vertex is the one of an unpaused run, on the incremental path
    and on the SVD one."""
    rng = np.random.default_rng(3)
    rows, theta, cost = rng.normal(size=(150, 10)), rng.normal(size=10), rng.random(150)
    runs = []
    monkeypatch.setattr(_crossover, "CHECK_ROWS", 0)  # exactly STEPS_PER_CHECK steps a call
    for steps in (1 << 30, 1, 3):
        monkeypatch.setattr(_crossover, "STEPS_PER_CHECK", steps)
        block = _crossover._purify(rows, theta, cost, np.random.default_rng(0), np.ones(150),
                                   150, 0, dep_rtol)
        runs.append((np.sort(block.tight), block.theta))
    for tight, found in runs[1:]:
        np.testing.assert_array_equal(tight, runs[0][0])
        np.testing.assert_array_equal(found, runs[0][1])


def test_ctrl_c_during_the_greedy_start_stops_its_lps(monkeypatch, default_sigint):
    """SIGINT during the first LP of the greedy start: the other LPs of the start and the
    refits are skipped (mean splits), the search ends at once, the best tree so far comes
    back (before: every LP of the start and the refits still ran)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    y = rng.integers(0, 3, 300)
    calls = {"n": 0}
    real = _starts.solve_hinge_lp

    def lp(block, cost, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return real(block, cost, *args, **kwargs)

    monkeypatch.setattr(_starts, "solve_hinge_lp", lp)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        res = gto.optimize(gto.Tree.complete(3, [0, 1, 2, 0, 1, 2, 0, 1], 4), X, y,
                           random_state=0, init="greedy")
    assert res.status == "interrupted"
    assert calls["n"] == 1
    assert res.n_errors == np.sum(res.tree.predict(X) != y)


def test_a_time_limit_that_passes_in_the_start_returns_the_start(monkeypatch):
    """The deadline passes during the greedy start's LPs: no crossover, no search; the
    partial start comes back with status time_limit (before: every phase ran on)."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    real = _starts.solve_hinge_lp
    clock = {"now": 0.0}

    def lp(block, cost, *args, **kwargs):
        clock["now"] = 1e18  # the LP "took" forever
        return real(block, cost, *args, **kwargs)

    import gto.utils._interrupt as interrupt

    monkeypatch.setattr(_starts, "solve_hinge_lp", lp)
    monkeypatch.setattr(interrupt.time, "time", lambda: clock["now"] or 1.0)
    tree = gto.Tree.complete(2, [0, 1], 3)
    res = gto.optimize(tree, X, y, random_state=0, init="greedy", time_limit=3600)
    assert res.nit == 0 and res.status == "time_limit"
    assert res.n_errors == np.sum(res.tree.predict(X) != y)


# -- many features ----------------------------------------------------------------------------
def test_the_diagonal_scaling_of_many_features_stays_a_vector():
    import tracemalloc

    from gto.engine._scaling import Scaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3000)) * rng.uniform(0.1, 10, 3000)
    X[:, 7] = 2.5  # a constant feature: weight 0
    tracemalloc.start()
    scaler = Scaler(X, diagonal=True)
    Z = scaler.transform(X)
    W, gamma = rng.normal(size=(3, 3000)), rng.normal(size=3)
    back = scaler.to_original(W, gamma)
    again = scaler.to_scaled(*back)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3000 * 3000 * 8 / 10  # no n x n matrix (72 MB)
    # the literal map: u = (x - c) / s, x' = (u - mean) / std per feature
    lo, hi = X.min(axis=0), X.max(axis=0)
    half = (hi - lo) / 2
    U = np.where(half > 0, (X - (lo + hi) / 2) / np.where(half > 0, half, 1), 0.0)
    std = U.std(axis=0)
    literal = (U - U.mean(axis=0)) / np.where(std > 0, std, 1.0)
    assert np.allclose(Z, literal, atol=1e-9)
    assert np.allclose(X @ back[0].T - back[1], Z @ W.T - gamma, atol=1e-8)  # same decisions
    W[:, 7] = 0.0  # (a constant feature's weight goes into the threshold)
    assert np.allclose(again[0][:, np.arange(3000) != 7], W[:, np.arange(3000) != 7])


@pytest.mark.parametrize("m", [401, 900])
def test_large_blocks_condition_estimate_agrees_with_the_svd(m):
    from gto.engine._lp_kernels import EXACT_COND_MAX, POWER_STEPS, norm2_estimate, well_conditioned

    assert m > EXACT_COND_MAX
    rng = np.random.default_rng(m)
    for gap in (1e-3, 1e-9, 1e-13, 0.0):
        M = rng.normal(size=(m, m))
        M[:, 0] = M[:, 1] + gap * rng.normal(size=m)  # columns a gap apart
        s = np.linalg.svd(M, compute_uv=False)
        cond = s[0] / s[-1] if s[-1] > 0 else np.inf
        if cond < 1e15:  # beyond, both are rounding noise (and far above MAX_COND)
            estimate = (norm2_estimate(M, POWER_STEPS, False)
                        * norm2_estimate(np.linalg.inv(M), POWER_STEPS, False))
            assert cond / 1.1 <= estimate <= cond * (1 + 1e-9)
        assert well_conditioned(M, _block.MAX_COND, np.empty((0, 0)), False) == (
            cond <= _block.MAX_COND)


# -- workers --------------------------------------------------------------------------------
def test_workers_capped_by_the_work_and_the_cores(monkeypatch):
    import joblib

    import gto.learners._optimize as opt

    asked = []

    class Recording(joblib.Parallel):
        def __init__(self, n_jobs=None, **kwargs):
            asked.append(n_jobs)
            super().__init__(n_jobs=1, **kwargs)

    monkeypatch.setattr(opt, "Parallel", Recording)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    tree = gto.Tree.complete(1, [0, 1], 2)
    gto.optimize(tree, X, y, n_jobs=8, restarts=2, max_iter=20, random_state=0)
    gto.optimize(tree, X, y, n_jobs=10_000, restarts=3, max_iter=20, random_state=0)
    assert asked and max(asked) <= min(2, joblib.cpu_count())
    assert capped_jobs(10_000, 5000) == joblib.cpu_count()
    assert capped_jobs(-1, 1) == 1
    with pytest.raises(ValueError, match="n_jobs"):
        gto.optimize(tree, X, y, n_jobs=0, restarts=2)


def test_cli_jobs_above_the_cores_refused(data_csv, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(data_csv), "--jobs", "10000", "-o", str(tmp_path / "m.json")])
    assert exc.value.code == 2
    assert "--jobs" in capsys.readouterr().err


# The resource trackers of multiprocessing and loky are one per process (not workers): they
# hold no work and end with the process, so the in-process checks leave them out.
WATCH_WORKERS = r"""
import json, sys, threading, time
import joblib, numpy as np, psutil
import gto
if len(sys.argv) > 2:  # pretend to have that many cores: only the work caps the workers
    joblib.cpu_count = lambda *args, **kwargs: int(sys.argv[2])
me, seen, done = psutil.Process(), set(), threading.Event()
mine = me.cmdline()
def workers(started=False):
    # child processes other than the resource tracker; started: only those past their
    # exec (between fork and exec a child shows no command line, or ours, and may yet
    # become the resource tracker)
    kids = []
    for c in me.children(recursive=True):
        try:
            line = c.cmdline()
            if "resource_tracker" not in " ".join(line) and not (started and line in ([], mine)):
                kids.append(c.pid)
        except psutil.Error:
            pass
    return kids
def watch():
    while not done.is_set():
        seen.update(workers(started=True))
        time.sleep(0.005)
watcher = threading.Thread(target=watch)
watcher.start()
rng = np.random.default_rng(0)
X = rng.normal(size=(80, 3))
y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
res = gto.optimize(gto.Tree.complete(2, [0, 1], 3), X, y, n_jobs=int(sys.argv[1]), restarts=2,
                   max_iter=300, random_state=0)
done.set()
watcher.join()
print(json.dumps({"started": len(seen), "left": workers(), "nfev": len(res.restarts)}))
"""


def _watched_optimize(n_jobs, *cores):
    out = subprocess.run([sys.executable, "-c", WATCH_WORKERS, str(n_jobs), *map(str, cores)],
                         cwd=ROOT,
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_no_worker_process_outlives_optimize():
    seen = _watched_optimize(2)
    assert seen["started"] == 2  # the restarts did run in workers
    assert seen["left"] == []


def test_workers_started_are_counted_by_the_processes_seen():
    seen = _watched_optimize(8, 64)  # two restarts on 64 cores: two workers, not eight
    assert 1 <= seen["started"] <= 2
    assert seen["left"] == []


SUBREAPER = r"""
import ctypes, os, subprocess, sys, time
import psutil
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come here
code = subprocess.run([sys.executable, "-m", "gto"] + sys.argv[1:]).returncode
def alive():
    try:  # reap the orphans that ended (they are this process's children now)
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    return [p for p in psutil.Process().children(recursive=True)
            if p.status() != psutil.STATUS_ZOMBIE]
for _ in range(100):  # a resource tracker sees its parent gone within moments
    if not alive():
        break
    time.sleep(0.05)
print(code, len(alive()))
"""


def test_no_process_outlives_the_cli_with_jobs(data_csv, tmp_path):
    out = subprocess.run([sys.executable, "-c", SUBREAPER, "fit", str(data_csv), "--jobs", "2",
                          "--restarts", "2", "--max-iter", "50", "-q", "-o",
                          str(tmp_path / "m.json")], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"], out.stderr  # exit 0, no process left behind


def test_the_cli_default_fit_with_jobs_leaks_nothing(data_csv, tmp_path):
    """``gto fit --jobs 2`` with the default internal CV: exit 0, no process left
    behind, and no "leaked semaphore objects" from the resource tracker at exit
    (before: the idle workers were killed rather than let go)."""
    out = subprocess.run([sys.executable, "-c", SUBREAPER, "fit", str(data_csv), "--jobs", "2",
                          "-q", "-o", str(tmp_path / "m.json")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"], out.stderr
    assert "leaked" not in out.stderr, out.stderr


# -- sizes that cannot fit ---------------------------------------------------------------------
def test_a_tree_too_big_for_memory_refused_at_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(_memory, "available_bytes", lambda: 16 * 2**30)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = rng.integers(0, 2, 200)
    tree = gto.Tree.complete(12, [0, 1], 4)
    assert search_bytes(tree, y, 5) > 16 * 2**30
    with pytest.raises(ValueError, match="memory"):
        TreeProblem(tree, X, y)
    from gto.learners import _estimator

    def no_fit(*args, **kwargs):  # "at once": before the internal CV's first fit
        raise AssertionError("a fold was fitted before the memory check")

    monkeypatch.setattr(_estimator, "_fold_score", no_fit)
    path = tmp_path / "d.csv"
    path.write_text("a,b,c,d,class\n" + "".join(
        ",".join(f"{v:.4f}" for v in row) + f",{c}\n" for row, c in zip(X, y)))
    code, _, err = run(capsys, "fit", path, "--depth", "12", "-q", "-o", tmp_path / "m.json")
    assert code == 2 and one_line_error(err) and "memory" in err
    assert not (tmp_path / "m.json").exists()


def test_search_bytes_counts_the_walker_arrays():
    """The estimate against the arrays actually built (walker, blocks, rows)."""
    from gto.engine._walker import walker_from_theta

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = rng.integers(0, 2, 50)
    tree = gto.Tree.complete(3, [0, 1], 3)
    P = TreeProblem(tree, X, y)
    walker = walker_from_theta(P, rng.normal(size=(P.layout.D, P.data.m)), P.objective("product"))
    built = walker._H.nbytes + walker._terms.nbytes + sum(
        3 * r.nbytes for r in P.blocks.rows) + sum(b.Binv.nbytes for b in walker.blocks)
    estimate = search_bytes(tree, P.data.y, P.data.m)
    assert built <= estimate <= 2 * built + 8 * 3 * P.data.m ** 2 + 10_000


# -- inputs never overwritten -----------------------------------------------------------------
def _refused(capsys, argv, victim):
    before = victim.read_bytes()
    code, _, err = run(capsys, *argv)
    assert code == 2 and one_line_error(err), err
    assert victim.read_bytes() == before


def test_output_onto_an_input_refused(data_csv, model_json, tmp_path, capsys):
    _refused(capsys, ["fit", data_csv, "-q", "-o", data_csv], data_csv)
    _refused(capsys, ["export", model_json, "-o", model_json], model_json)
    _refused(capsys, ["export", model_json, "--format", "json", "-o", model_json], model_json)
    _refused(capsys, ["predict", model_json, data_csv, "-o", data_csv], data_csv)
    _refused(capsys, ["predict", model_json, data_csv, "-o", model_json], model_json)
    hard = tmp_path / "hard.csv"
    os.link(data_csv, hard)
    _refused(capsys, ["fit", data_csv, "-q", "-o", hard], data_csv)
    link = tmp_path / "link.json"
    link.symlink_to(model_json)
    _refused(capsys, ["export", model_json, "-o", link], model_json)
    _refused(capsys, ["fit", data_csv, "-q", "-o", tmp_path / "." / data_csv.name], data_csv)


def test_a_write_protected_output_is_not_replaced(data_csv, model_json, tmp_path, capsys):
    out = tmp_path / "protected.json"
    out.write_text("keep me\n")
    out.chmod(0o444)
    _refused(capsys, ["fit", data_csv, "-q", "-o", out], out)
    _refused(capsys, ["export", model_json, "-o", out], out)
    _refused(capsys, ["predict", model_json, data_csv, "-o", out], out)
    with pytest.raises(PermissionError):
        gto.Tree.load(model_json).save(out)
    assert out.read_text() == "keep me\n"


def test_errors_name_the_path_not_a_temporary_file(model_json, tmp_path, monkeypatch, capsys):
    real_open = os.open

    def refuse_temporary(path, *args, **kwargs):
        if os.path.basename(str(path)).startswith((".tmp-", ".gto-probe-")):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_temporary)
    out = tmp_path / "out.dot"
    code, _, err = run(capsys, "export", model_json, "-o", out)
    assert code == 2 and one_line_error(err)
    assert ".tmp-" not in err and ".gto-probe-" not in err and "out.dot" in err


def test_permission_denied_is_not_no_such_file(data_csv, tmp_path, monkeypatch, capsys):
    real_open = open

    def denied(path, *args, **kwargs):
        if str(path) == str(data_csv):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", denied)
    code, _, err = run(capsys, "fit", data_csv, "-q", "-o", tmp_path / "m.json")
    assert code == 2 and one_line_error(err) and "permission denied" in err
    assert "no such file" not in err


# -- weights and numbers that overflow ---------------------------------------------------------
def test_weights_near_the_float_limit(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    w = np.full(60, 1e308)
    res = gto.optimize(gto.Tree.complete(1, [0, 1], 2), X, y, sample_weight=w, random_state=0)
    assert res.n_errors == 0 and np.isfinite(res.fun)
    assert np.sum(res.tree.predict(X) != y) == 0
    assert np.all(np.isfinite(res.tree.leaf_counts))
    path = tmp_path / "w.csv"
    path.write_text("a,b,w,class\n" + "".join(
        f"{p:.6f},{q:.6f},1e308,{c}\n" for (p, q), c in zip(X, y)))
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--sample-weight", "w", "--depth", "1", "-o", model)
    assert code == 0 and "inf" not in err and "nan" not in err
    share = 100 * walk_errors(gto.Tree.load(model), X, y) / len(y)  # equal weights: a share of points
    assert f"({share:.1f} %; 60 points)" in err and "weights rescaled" in err
    assert "Infinity" not in model.read_text() and "NaN" not in model.read_text()
    assert run(capsys, "show", model)[0] == 0


def test_model_numbers_too_large_for_a_float(model_json, tmp_path, capsys):
    for key in ("gamma", "W", "leaf_counts"):
        data = json.loads(model_json.read_text())
        value = data[key]
        if key == "gamma":
            value[0] = 10**400
        else:
            value[0][0] = 10**400
        bad = tmp_path / f"big_{key}.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(ValueError):
            gto.Tree.load(bad)
        code, _, err = run(capsys, "show", bad)
        assert code == 2 and one_line_error(err)


# -- labels as written ------------------------------------------------------------------------
@pytest.mark.parametrize("texts, classes", [
    (["007", "7"], ["007", "7"]),
    (["1", "1.0"], ["1", "1.0"]),
    (["١", "2"], ["2", "١"]),
    (["1_000", "1000"], ["1000", "1_000"]),
    (["+7", "7"], ["+7", "7"]),
    (["1", "2"], [1, 2]),
    (["1.5", "2.0"], [1.5, 2.0]),
])
def test_labels_kept_as_written(texts, classes):
    assert np.unique(_files.labels(texts * 3)).tolist() == classes


def test_cli_classes_as_written(tmp_path, capsys):
    path = tmp_path / "d.csv"
    rows = [(float(i), "007" if i < 10 else "7") for i in range(20)]
    path.write_text("a,class\n" + "".join(f"{a},{c}\n" for a, c in rows))
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--depth", "1", "-q", "-o", model)
    assert code == 0, err
    assert sorted(gto.Tree.load(model).classes.tolist()) == ["007", "7"]
    code, out, _ = run(capsys, "predict", model, path, "-q")
    assert out.splitlines()[1:] == [c for _, c in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(-10**6, 10**6).map(str),
                          st.floats(-1e6, 1e6, allow_nan=False).map(repr),
                          st.sampled_from(["007", "1_000", "١", "+3", "1e3", "1.50", "x"])),
                min_size=1, max_size=12))
def test_labels_round_trip_and_never_merge(texts):
    """Distinct texts stay distinct classes and each label prints as it was written."""
    out = _files.labels(texts)
    assert [str(v) for v in out.tolist()] == texts
    assert len(set(out.tolist())) == len(set(texts))


# -- columns ------------------------------------------------------------------------------------
def test_target_as_weights_and_index_columns_refused(data_csv, tmp_path, capsys):
    code, _, err = run(capsys, "fit", data_csv, "--sample-weight", "class", "-o",
                       tmp_path / "m.json")
    assert code == 2 and one_line_error(err) and "target" in err
    path = tmp_path / "indexed.csv"
    path.write_text(",u,v,class\n0,1,2,a\n1,3,4,b\n2,5,6,a\n3,7,8,b\n")
    code, _, err = run(capsys, "fit", path, "-o", tmp_path / "m.json")
    assert code == 2 and one_line_error(err) and "no name" in err and "index" in err


# -- reading: pipes, compression, line numbers -----------------------------------------------
def _gto(args, **kwargs):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(["bash", "-c", args], capture_output=True, text=True, env=env,
                          cwd=kwargs.pop("cwd", ROOT), timeout=600, **kwargs)


def test_pipes_and_process_substitution(data_csv, tmp_path):
    py = sys.executable
    for src in (f"cat {data_csv} | {py} -m gto fit /dev/stdin",
                f"{py} -m gto fit <(cat {data_csv})"):
        out = tmp_path / "m.json"
        r = _gto(f"{src} --max-iter 20 -q -o {out}")
        assert r.returncode == 0, r.stderr
        assert gto.Tree.load(out).n_features == 2
        out.unlink()


def test_closed_stdout_is_one_line(model_json):
    r = _gto(f"{sys.executable} -m gto show {model_json} >&-")
    assert r.returncode == 2 and one_line_error(r.stderr), r.stderr


def test_gzip_with_a_ragged_line(tmp_path, capsys):
    path = tmp_path / "d.csv.gz"
    path.write_bytes(gzip.compress(b"a,b,class\n1,2,x\n3,4,y\n5,6,7,x\n"))
    code, _, err = run(capsys, "fit", path, "-o", tmp_path / "m.json")
    assert code == 2 and one_line_error(err) and "line 4" in err
    good = tmp_path / "good.csv.gz"
    good.write_bytes(gzip.compress(b"a,b,class\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n"))
    assert run(capsys, "fit", good, "--max-iter", "10", "-q", "-o", tmp_path / "m.json")[0] == 0


@pytest.mark.parametrize("text, line", [
    ("a,b,class\n\n\n1,2,x\n3,zz,y\n", 5),  # blank lines
    ('a,b,class\n1,2,"x\ny"\n3,zz,y\n', 4),  # a quoted field over two lines
    ("a,b,class\n1,2,?\n3,4,y\n5,6,x\n7,zz,y\n", 5),  # with --drop-na: after a dropped row
])
def test_line_numbers_as_in_the_file(tmp_path, capsys, text, line):
    path = tmp_path / "d.csv"
    path.write_text(text)
    code, _, err = run(capsys, "fit", path, "--drop-na", "-o", tmp_path / "m.json")
    assert code == 2 and one_line_error(err) and f"line {line}," in err, err


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=4, max_size=4), st.integers(0, 3))
def test_line_numbers_with_blank_lines_anywhere(blanks, bad):
    """Blank lines before each of four rows; the row ``bad`` holds a word: the error names
    the line it is on in the file."""
    rows = ["1,2,x", "3,4,y", "5,6,x", "7,8,y"]
    rows[bad] = rows[bad].replace("2", "zz").replace("4", "zz").replace("6", "zz").replace(
        "8", "zz")
    lines = ["a,b,class"]
    for k, row in zip(blanks, rows):
        lines += [""] * k + [row]
    frame_line = lines.index(rows[bad]) + 1
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "d.csv")
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        with pytest.raises(_files.DataError, match=f"line {frame_line},"):
            _files.read_table(path, "class")


# -- output hygiene ---------------------------------------------------------------------------
def test_names_cannot_forge_lines(tmp_path, capsys):
    tree = gto.Tree.complete(1, [0, 1], 2)
    tree.W, tree.gamma = np.array([[1.0, 1.0]]), np.array([0.0])
    tree.feature_names = ["a\nclass 1  [leaf 9]", "b\x1b[2J"]
    text = gto.export_text(tree)
    assert len(text.splitlines()) == 4 and "\x1b" not in text and "\\n" in text
    path = tmp_path / "m.json"
    tree.save(path)
    code, out, _ = run(capsys, "show", path)
    assert code == 0 and len(out.splitlines()) == 5 and "\x1b" not in out
    assert printable("plain é") == "plain é"


def test_formula_labels_escaped_in_predicted_csv(tmp_path, capsys):
    path = tmp_path / "d.csv"
    labels = ["=HYPERLINK(\"http://x\")", "safe"]
    path.write_text("a,class\n" + "".join(f"{i},{labels[i >= 5]}\n" for i in range(10)))
    model = tmp_path / "m.json"
    assert run(capsys, "fit", path, "--depth", "1", "-q", "-o", model)[0] == 0
    out = tmp_path / "p.csv"
    assert run(capsys, "predict", model, path, "-q", "-o", out)[0] == 0
    cells = out.read_text().splitlines()[1:]
    assert not any(c.lstrip('"').startswith(("=", "+", "-", "@")) for c in cells)
    assert "'=HYPERLINK" in out.read_text()
    assert csv_safe(-1) == -1 and csv_safe("-1") == "'-1" and csv_safe("a") == "a"


def test_installed_names_are_safe():
    """pyproject.toml installs no top-level 'experiments': the scripts go in as gto._experiments."""
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        setuptools = tomllib.load(fh)["tool"]["setuptools"]
    tops = {name.split(".")[0] for name in setuptools["packages"]}
    assert tops == {"gto", "tabu", "problems"}
    assert setuptools["package-dir"] == {"gto._experiments": "experiments"}


def test_a_shadowing_tabu_is_refused(tmp_path):
    (tmp_path / "tabu.py").write_text("x = 1\n")
    r = _gto(f"{sys.executable} -c 'import gto'", cwd=tmp_path)
    assert r.returncode != 0 and "shadows" in r.stderr
