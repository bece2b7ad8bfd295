"""Fixtures; the shared independent truths (literal tree walks, random trees) are in
``truths.py``."""
import signal

import numpy as np
import pytest


@pytest.fixture(scope="session", autouse=True)
def compiled_engine():
    """Compile the engine's numba loops before any test: they compile at their first
    call for each argument type (minutes on a cold cache, once per install;
    docs/speed.md), which no time limit can interrupt, so a test of ``time_limit``
    must not be the first caller.  A depth-2 search and a depth-3 scikit-learn tree
    with free leaves (the region start), each run twice (a second fit in a process
    reaches some loops with other argument types), reach every compiled loop of a
    default ``gto.optimize``."""
    from sklearn.tree import DecisionTreeClassifier

    import gto
    import problems

    X, y = problems.load("diabetes")
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    for _ in range(2):
        gto.optimize(gto.Tree.complete(2, [0, 1, 0, 1], X.shape[1]), X, y, max_iter=50,
                     random_state=0)
        gto.optimize(cart, X, y, max_iter=50, random_state=0)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handling during the test, as in an interactive session.

    A job started in the background of a non-interactive shell (``nohup ... &``)
    inherits SIGINT ignored; gto then leaves it alone (a handler it does not own),
    so a test that sends itself SIGINT would see nothing happen (or wait for it
    forever)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
