"""Run a cvxpy MIP on the chosen solver; HiGHS runs through highspy directly.

cvxpy 1.9 hands HiGHS a start only from its own previous solve (the solver
cache), never from ``Variable.value``; so for HiGHS the model matrices are
taken from ``problem.get_problem_data`` and solved with ``highspy`` here,
where ``Highs.setSolution`` accepts a start and the improving-solution
callback times the incumbents.  Other MIP solvers run through
``problem.solve`` and take no start.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from numbers import Real

import cvxpy as cp
import numpy as np
from cvxpy.reductions.solvers.defines import INSTALLED_MI_SOLVERS, INSTALLED_SOLVERS, MI_SOLVERS
from sklearn.utils._param_validation import Interval

from ..utils._validation import SECONDS
from . import result as R

DEFAULT_SOLVER = "HIGHS"

_HIGHS_STATUS = {
    "kOptimal": R.OPTIMAL,
    "kTimeLimit": R.TIME_LIMIT,
    "kInfeasible": R.INFEASIBLE,
    "kInterrupt": R.INTERRUPTED,
}
_CVXPY_STATUS = {
    cp.OPTIMAL: R.OPTIMAL,
    cp.OPTIMAL_INACCURATE: R.TIME_LIMIT,  # scipy.milp: iteration or time limit
    cp.USER_LIMIT: R.TIME_LIMIT,
    cp.INFEASIBLE: R.INFEASIBLE,
    cp.INFEASIBLE_INACCURATE: R.INFEASIBLE,
}


#: declared constraints of the arguments every MIP solver takes (validate_params)
BUDGET = {
    "time_limit": SECONDS,
    "mip_gap": [Interval(Real, 0, 1, closed="left")],
    "solver": [str, None],
    "sample_weight": ["array-like", None],
    "verbose": ["verbose"],
}


def check_solver(solver):
    """Upper-case name of an installed cvxpy MIP solver; ValueError/TypeError otherwise."""
    if solver is None:
        return DEFAULT_SOLVER
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a cvxpy solver name (str), got {type(solver).__name__}")
    name = solver.upper()
    if name not in INSTALLED_SOLVERS:
        raise ValueError(f"unknown or uninstalled solver {solver!r}; installed: {INSTALLED_SOLVERS}")
    if name not in MI_SOLVERS:
        raise ValueError(
            f"solver {name} cannot solve mixed-integer problems; "
            f"installed MIP solvers: {INSTALLED_MI_SOLVERS}"
        )
    return name


def run(problem, solver, time_limit=None, mip_gap=1e-4, start=None, verbose=False):
    """Solve the minimisation ``problem``; return a dict of outcome fields and ``values``.

    ``start`` maps every cvxpy Variable to a value (a complete assignment).
    ``values`` maps each Variable to its incumbent value, or is None.
    """
    if solver == "HIGHS":
        return _run_highs(problem, time_limit, mip_gap, start, verbose)
    if start is not None:
        raise ValueError(
            f"warm starts need solver='HIGHS' (given through highspy); cvxpy cannot hand "
            f"a start to {solver}"
        )
    return _run_cvxpy(problem, solver, time_limit, mip_gap, verbose)


def gap(objective, bound):
    """``(objective - bound) / max(|objective|, 1e-10)``, at least 0; None without a finite bound."""
    if objective is None or bound is None or not np.isfinite(bound):
        return None
    return max(0.0, (objective - bound) / max(abs(objective), 1e-10))


def _run_cvxpy(problem, solver, time_limit, mip_gap, verbose):
    opts = {}
    if solver == "SCIPY":
        opts["scipy_options"] = {"mip_rel_gap": mip_gap, "disp": verbose}
        if time_limit is not None:
            opts["scipy_options"]["time_limit"] = float(time_limit)
    elif time_limit is not None:
        opts["time_limit"] = float(time_limit)  # cvxpy's generic name; solvers may ignore it
    t0 = time.perf_counter()
    try:
        problem.solve(solver=solver, verbose=verbose, **opts)
    except cp.error.SolverError as exc:
        return _failure(R.ERROR, str(exc), time.perf_counter() - t0, solver)
    runtime = time.perf_counter() - t0
    status = _CVXPY_STATUS.get(problem.status, R.ERROR)
    if problem.status not in cp.settings.SOLUTION_PRESENT:
        return _failure(status, problem.status, runtime, solver)
    objective = float(problem.value)
    extra = problem.solver_stats.extra_stats or {}
    bound = extra.get("mip_dual_bound") if isinstance(extra, dict) else None
    if bound is not None:  # the solver's bound leaves out cvxpy's constant offset
        data = problem.get_problem_data(solver)[0]
        bound = float(bound) + float(data["param_prob"].apply_parameters()[1])
    elif status == R.OPTIMAL:
        bound = objective
    return {
        "values": {v: v.value for v in problem.variables()},
        "status": status,
        "message": problem.status,
        "objective": objective,
        "bound": None if bound is None else float(bound),
        "gap": gap(objective, bound),
        "time_to_first": None,
        "time_to_best": None,
        "incumbents": [],
        "runtime": runtime,
        "start_objective": None,
        "solver": solver,
    }


def _failure(status, message, runtime, solver, bound=None):
    return {
        "values": None, "status": status, "message": message, "objective": None,
        "bound": bound, "gap": None, "time_to_first": None, "time_to_best": None,
        "incumbents": [], "runtime": runtime, "start_objective": None, "solver": solver,
    }


def _column_vector(problem_data, start):
    """The solver's column vector of a complete assignment ``{Variable: value}``."""
    param_prob = problem_data["param_prob"]
    given = {var.id: value for var, value in start.items()}
    missing = set(param_prob.var_id_to_col) - set(given)
    if missing:
        raise ValueError(f"the warm start leaves model variables {sorted(missing)} unassigned")
    x = np.empty(param_prob.x.size)
    for var_id, col in param_prob.var_id_to_col.items():
        value = np.asarray(given[var_id], dtype=float).ravel(order="F")
        x[col : col + value.size] = value
    return x


def _highs_model(data):
    """A highspy model of cvxpy's HiGHS problem data ``min c x, A x <=/= b``."""
    import highspy as hp

    inf = hp.kHighsInf
    A = data["A"].tocsc()
    n_eq = data["dims"].zero
    lower = np.concatenate([data["b"][:n_eq], np.full(A.shape[0] - n_eq, -inf)])
    lp = hp.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.col_cost_ = data["c"]
    lp.row_lower_, lp.row_upper_ = lower, data["b"]
    lb, ub = data["lower_bounds"], data["upper_bounds"]
    col_lower = np.full(A.shape[1], -inf) if lb is None else lb.copy()
    col_upper = np.full(A.shape[1], inf) if ub is None else ub.copy()
    integrality = [hp.HighsVarType.kContinuous] * A.shape[1]
    for j in list(data["bool_vars_idx"]) + list(data["int_vars_idx"]):
        integrality[j] = hp.HighsVarType.kInteger
    for j in data["bool_vars_idx"]:
        col_lower[j], col_upper[j] = max(col_lower[j], 0.0), min(col_upper[j], 1.0)
    lp.integrality_ = integrality
    lp.col_lower_, lp.col_upper_ = col_lower, col_upper
    lp.a_matrix_.format_ = hp.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    return lp


@contextlib.contextmanager
def _no_stdout():
    """Send the process's standard output (file descriptor 1, where HiGHS's C++ code
    prints its banner before any option can be set) to the null device for a moment."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output at all: nothing to silence
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _run_highs(problem, time_limit, mip_gap, start, verbose):
    import highspy as hp

    data, _, _ = problem.get_problem_data(cp.HIGHS)
    offset = float(data["param_prob"].apply_parameters()[1])
    with contextlib.nullcontext() if verbose else _no_stdout():  # the banner of the first Highs()
        h = hp.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    h.passModel(_highs_model(data))
    start_objective = None
    if start is not None:
        x0 = _column_vector(data, start)
        start_objective = float(data["c"] @ x0) + offset
        sol = hp.HighsSolution()
        sol.col_value = x0
        sol.value_valid = True
        if h.setSolution(sol) != hp.HighsStatus.kOk:
            raise RuntimeError("HiGHS rejected the warm start (setSolution failed)")
    incumbents = []

    def improving(event):
        incumbents.append((event.data_out.running_time, event.data_out.objective_function_value + offset))

    h.cbMipImprovingSolution.subscribe(improving)
    h.HandleKeyboardInterrupt = True  # Ctrl-C stops the search and keeps the incumbent
    t0 = time.perf_counter()
    h.solve()
    runtime = time.perf_counter() - t0
    model_status = h.getModelStatus()
    name = model_status.name
    message = h.modelStatusToString(model_status)
    status = _HIGHS_STATUS.get(name, R.ERROR)
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    bound = info.mip_dual_bound + offset if np.isfinite(info.mip_dual_bound) else None
    if not has_solution:
        out = _failure(status, message, runtime, "HIGHS", bound)
        out["start_objective"] = start_objective
        return out
    x = np.asarray(h.getSolution().col_value)
    values = {}
    param_prob = data["param_prob"]
    for var in problem.variables():
        col = param_prob.var_id_to_col[var.id]
        values[var] = x[col : col + var.size].reshape(var.shape, order="F")
    objective = float(info.objective_function_value) + offset
    return {
        "values": values,
        "status": status,
        "message": message,
        "objective": objective,
        "bound": bound,
        "gap": gap(objective, bound),
        "time_to_first": incumbents[0][0] if incumbents else None,
        "time_to_best": incumbents[-1][0] if incumbents else None,
        "incumbents": incumbents,
        "runtime": runtime,
        "start_objective": start_objective,
        "solver": "HIGHS",
    }
