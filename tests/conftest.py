import numpy as np
import pytest

import gto


def random_structure(rng, n_decisions, classes):
    """A random binary shape with n_decisions internal nodes and random leaf labels."""
    if n_decisions == 0:
        return classes[rng.integers(len(classes))]
    left = int(rng.integers(n_decisions))
    return (
        random_structure(rng, left, classes),
        random_structure(rng, n_decisions - 1 - left, classes),
    )


def random_tree(rng, n_decisions, classes, n_features):
    while True:  # at least one decision and two distinct leaf classes
        spec = random_structure(rng, n_decisions, classes)
        if isinstance(spec, tuple) and len(set(gto.Tree(spec, 1).leaf_classes.tolist())) > 1:
            break
    return gto.Tree.from_structure(
        spec,
        n_features,
        W=rng.normal(size=(n_decisions, n_features)),
        gamma=rng.normal(size=n_decisions),
    )


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
