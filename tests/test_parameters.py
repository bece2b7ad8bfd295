"""Parameters are declared once, with scikit-learn's tools (``_parameter_constraints``,
``validate_params``): every parameter of the public functions and of ``GTOClassifier``
is checked before any work, and a wrong type and a wrong value raise the same
``InvalidParameterError`` (a ValueError and a TypeError) naming the parameter."""
import inspect

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import gto
import gto.mip
import gto.slim

X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
Y = np.array([0, 1, 1, 1])
STUMP = gto.Tree.from_structure((0, 1), 2)

#: the public functions with valid data arguments; their other parameters must be declared
FUNCTIONS = {
    "optimize": (gto.optimize, {"tree": STUMP, "X": X, "y": Y}, {"tree", "X", "y"}),
    "error": (gto.error, {"tree": STUMP, "X": X, "y": Y}, {"tree", "X", "y"}),
    "mip.solve": (gto.mip.solve, {"tree": STUMP, "X": X, "y": Y},
                  {"tree", "X", "y", "warm_start"}),
    "mip.solve_oct": (gto.mip.solve_oct, {"X": X, "y": Y, "depth": 1}, {"X", "y", "warm_start"}),
    "mip.solve_odt": (gto.mip.solve_odt, {"X": X, "y": Y, "structure": (0, 1)},
                      {"X", "y", "structure", "warm_start"}),
    "slim.improve": (gto.slim.improve, {"tree": STUMP, "X": X, "y": Y},
                     {"tree", "X", "y", "max_samples_local"}),
}


def _declared(func, free):
    return [p for p in inspect.signature(func).parameters if p not in free]


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_parameter_of_a_public_function_is_checked_first(name):
    func, data, free = FUNCTIONS[name]
    params = _declared(func, free)
    assert len(params) >= 3
    for param in params:
        with pytest.raises(InvalidParameterError, match=rf"'{param}' parameter of {name.split('.')[-1]}"):
            func(**{**data, param: object()})


def test_every_estimator_parameter_is_declared_and_checked_at_fit():
    clf = gto.GTOClassifier()
    assert set(clf._parameter_constraints) == set(clf.get_params())
    free = {"structure"}  # nested pairs of labels, read by gto.Tree (with its own messages)
    for param in set(clf.get_params()) - free:
        with pytest.raises(InvalidParameterError, match=f"'{param}' parameter of GTOClassifier"):
            gto.GTOClassifier(**{param: object()}).fit(X, Y)


@pytest.mark.parametrize("kwargs", [{"max_iter": "3"}, {"max_iter": -1}, {"max_iter": 2.5},
                                    {"time_limit": "5"}, {"time_limit": 0}, {"time_limit": np.inf},
                                    {"restarts": 0}, {"alpha": np.nan}, {"init": "bogus"},
                                    {"random_state": -1}, {"random_state": "0"}])
def test_wrong_types_and_wrong_values_raise_one_error_type(kwargs):
    with pytest.raises(InvalidParameterError) as exc:
        gto.optimize(STUMP, X, Y, **kwargs)
    assert isinstance(exc.value, ValueError) and isinstance(exc.value, TypeError)
    assert f"'{next(iter(kwargs))}' parameter" in str(exc.value)


def test_valid_values_pass():
    rng = np.random.default_rng(0)
    for random_state in (None, 0, rng, np.random.RandomState(0)):
        res = gto.optimize(STUMP, X, Y, max_iter=5, time_limit=30, random_state=random_state)
        assert res.success
    clf = gto.GTOClassifier(alpha=0.5, max_features=1, max_iter=5, cv=2, svm=np.bool_(False),
                            random_state=rng).fit(X, Y)
    assert clf.alpha_ == 0.5
