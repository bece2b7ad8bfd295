"""How many joblib workers to start: never more than the tasks, nor (locally) than the cores.

``Parallel(n_jobs=10000)`` starts as many processes as asked (loky spawns
them whether or not there is work for them): one run with two restarts once
left a thousand idle workers holding 23 GB.  :func:`capped_jobs` gives the
count to pass instead: the tasks there are, the cores of this machine for
joblib's local backends (loky, multiprocessing, threading), and what the
active backend allows otherwise (a Dask cluster under
``joblib.parallel_backend("dask")`` may have more cores than this machine).
"""
from __future__ import annotations

import numbers
import sys
from contextlib import contextmanager

import joblib

#: joblib backends whose workers run on this machine
LOCAL_BACKENDS = ("LokyBackend", "MultiprocessingBackend", "ThreadingBackend", "SequentialBackend")


def check_n_jobs(n_jobs, name="n_jobs"):
    """``n_jobs`` as joblib reads it (None, an int >= 1, or -1, -2, ...: all cores but
    ``-n_jobs - 1``); ValueError for 0 and TypeError for a non-integer."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"{name} must be an int or None, got {n_jobs!r}")
    if n_jobs == 0:
        raise ValueError(f"{name}=0 workers: use 1, a count, -1 for all cores, or None")
    return int(n_jobs)


def capped_jobs(n_jobs, n_tasks):
    """Workers for ``n_tasks`` tasks under ``n_jobs`` (joblib's convention; the active
    ``joblib.parallel_backend`` counts): at most ``n_tasks``, and for local
    backends at most the cores (``joblib.cpu_count()``); at least 1."""
    n_jobs = check_n_jobs(n_jobs)
    workers = joblib.effective_n_jobs(n_jobs)
    backend, _ = joblib.parallel.get_active_backend()
    if type(backend).__name__ in LOCAL_BACKENDS:
        workers = min(workers, joblib.cpu_count())
    return max(1, min(workers, int(n_tasks)))


def _reusable_executor():
    """loky's reusable executor (joblib's default workers) if one is running, else None."""
    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    return getattr(reusable, "_executor", None)


def stop_workers(kill=False):
    """Shut loky's reusable worker processes down now (they otherwise idle 300 s).

    Idle workers are let go and exit at once; ``kill`` (after Ctrl-C or an error,
    when they may still be working) kills them where they stand.  Killing idle
    workers is not harmless: their queues' semaphores leak, and the resource
    tracker says so at exit ("leaked semaphore objects")."""
    executor = _reusable_executor()
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=kill)


@contextmanager
def no_workers_left():
    """Around a ``joblib.Parallel`` run: if the run started loky's reusable workers
    (none were running before), shut them down when it ends, normally or not, so that
    no worker process outlives the call (let go if the run ended, killed if it was
    interrupted or failed: see :func:`stop_workers`).  Workers the caller already had
    are left running for the caller (joblib reuses them)."""
    before = _reusable_executor()
    ended = False
    try:
        yield
        ended = True
    finally:
        after = _reusable_executor()
        if after is not None and after is not before:
            stop_workers(kill=not ended)
