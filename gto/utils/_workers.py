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
