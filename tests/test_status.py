"""The status vocabulary (tabu.status.Status, also gto.Status): one value per member, a
string equal only to the member's own name, and each search reporting the member that
says why it ended (a MIP at its gap is "optimal", a used-up budget is not)."""
import pickle
import re

import numpy as np
import pytest

import gto
import problems
import tabu
import tabu.status
from gto.model.tree import FIGURE2
from tabu.status import Status


def documented_codes():
    """``{name: code}`` from the table in tabu.status's docstring (the documented truth)."""
    rows = re.findall(r"^(\d+)\s+``([A-Z_]+)``", tabu.status.__doc__, flags=re.M)
    return {name: int(code) for code, name in rows}


def test_members_are_distinct_and_match_the_documented_codes():
    assert len(Status.__members__) == len(set(Status))  # no aliases
    assert {m.name: int(m) for m in Status} == documented_codes()
    assert len(documented_codes()) == 10


@pytest.mark.parametrize("member", list(Status))
def test_a_string_equals_only_the_members_own_name(member):
    name = member.name.lower()
    assert member == name and member == member.name and not member != name
    assert str(member) == name and f"{member}" == name and f"{member:>20}" == f"{name:>20}"
    assert f"{member:d}" == str(int(member))
    for other in Status:
        if other is not member:
            assert member != other.name.lower() and member != other and member != int(other)
    assert member == int(member) and Status(name) is member and Status(int(member)) is member
    assert pickle.loads(pickle.dumps(member)) is member  # joblib workers send results back


def test_an_iteration_limit_is_not_optimal():
    assert Status.ITERATION_LIMIT != Status.OPTIMAL
    assert Status.ITERATION_LIMIT != "optimal" and Status.ITERATION_LIMIT != 0
    assert Status.COMPLETED != "optimal" and Status.CONVERGED != "optimal"
    assert Status.OPTIMAL == 0 and Status.OPTIMAL == "optimal" and Status.OPTIMAL != "success"
    with pytest.raises(ValueError):
        Status("success")
    assert gto.Status is Status


def test_each_search_reports_why_it_ended():
    # a 20-move local search: its budget, not optimality
    A = np.array([[1.0, 1.0], [1.0, -1.0]])
    res = tabu.epts(lambda x: -float(x @ x), A_ub=A, b_ub=[4.0, 1.0], bounds=(0, 3), max_iter=20,
                    random_state=0)
    assert res.status == "iteration_limit" and res.status != "optimal" and res.success
    # the default search of gto.optimize: its schedule, no proof
    X, y = problems.load("liver")
    res = gto.optimize(gto.Tree.from_structure(FIGURE2, X.shape[1]), X, y, max_iter=20,
                       random_state=0)
    assert res.status is Status.COMPLETED and res.success and res.status != "optimal"
    assert all(r["status"] in (Status.ITERATION_LIMIT, Status.COMPLETED) for r in res.restarts)
    # Frank-Wolfe on one iteration: its iteration limit
    res = gto.optimize(gto.Tree.from_structure(FIGURE2, X.shape[1]), X, y, method="frank-wolfe",
                       max_iter=1, random_state=0)
    assert res.restarts[0]["status"] is Status.ITERATION_LIMIT and res.status is Status.COMPLETED


def test_a_mip_solved_to_its_gap_is_optimal_and_prints_so():
    pytest.importorskip("cvxpy")
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.2]])
    y = np.array([0, 1, 1, 1, 0])
    res = gto.mip.solve(gto.Tree.from_structure((0, 1), n_features=2), X, y, time_limit=60)
    assert res.status is Status.OPTIMAL and res.success and res.n_errors == 0
    assert str(res.status) == "optimal" and f"{res.status}" == "optimal"


def test_descent_reports_a_local_minimum():
    A = np.array([[1.0, 1.0]])
    walker = tabu.StandardFormWalker.from_inequalities(lambda x: float(x[0] + 2 * x[1]), A, [2.0],
                                                       bounds=(0, None))
    res = tabu.descent(walker)
    assert res.status is Status.CONVERGED and res.success and res.fun == 0.0
