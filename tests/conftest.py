"""Fixtures; the shared independent truths (literal tree walks, random trees) are in
``truths.py``."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
