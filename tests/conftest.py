"""Fixtures; the shared independent truths (literal tree walks, random trees) are in
``truths.py``."""
import numpy as np
import pytest


@pytest.fixture(scope="session", autouse=True)
def compiled_engine():
    """Compile the engine's numba loops before any test: they compile at their first
    call (minutes on a cold cache, once per install; docs/speed.md), which no time
    limit can interrupt, so a test of ``time_limit`` must not be the first caller.
    A depth-2 search and a depth-3 scikit-learn tree with free leaves (the region
    start) reach every compiled loop of a default ``gto.optimize``."""
    from sklearn.tree import DecisionTreeClassifier

    import gto

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (X[:, 2] > 0.7)
    gto.optimize(gto.Tree.complete(2, [0, 1, 0, 1], 3), X, y, max_iter=50, random_state=0)
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    gto.optimize(cart, X, y, max_iter=50, random_state=0)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
