"""Tabu rules of the EPTS driver (Algorithm 5.2), checked exactly on a hand-made hypercube walker."""
import time

import numpy as np
import pytest

import tabu
from tabu import Walker

NO_DIVERSIFY = dict(stagnation=1e6)  # a stagnation window longer than any run here


class Cube(Walker):
    """Vertices: bit strings of length d, values from a table; variable 2i+b is basic iff bit i == b."""

    def __init__(self, values, d, start=0, slow=0.0, interrupt_at=None):
        self.values, self.d, self.state = np.asarray(values, float), d, start
        self.n_variables = 2 * d
        self.slow, self.interrupt_at, self.moves = slow, interrupt_at, []

    def bit(self, i):
        return (self.state >> i) & 1

    @property
    def value(self):
        return float(self.values[self.state])

    @property
    def x(self):
        return np.array([self.bit(i) for i in range(self.d)], float)

    def basis(self):
        return np.array([2 * i + self.bit(i) for i in range(self.d)])

    def candidates(self):
        time.sleep(self.slow)
        i = np.arange(self.d)
        bits = (self.state >> i) & 1
        return 2 * i + 1 - bits, 2 * i + bits, self.values[self.state ^ (1 << i)]

    def evaluate(self, entering):
        i, want = divmod(entering, 2)
        if self.bit(i) == want:
            return -1, float("nan")
        return 2 * i + self.bit(i), float(self.values[self.state ^ (1 << i)])

    def pivot(self, entering, leaving):
        i = entering // 2
        assert leaving == 2 * i + self.bit(i) and entering == 2 * i + 1 - self.bit(i)
        if self.interrupt_at is not None and len(self.moves) + 1 == self.interrupt_at:
            raise KeyboardInterrupt
        self.moves.append((entering, leaving))
        self.state ^= 1 << i


def table(d, pairs, default=20.0):
    """Value table of the d-cube from {"b_{d-1}...b_0": value}."""
    v = np.full(2 ** d, default)
    for bits, val in pairs.items():
        v[int(bits, 2)] = val
    return v


def test_tabu_move_refused_unless_it_beats_the_best():
    # 00 (1) is a local minimum; after the forced move to 01 (3) the way back is
    # improving but tabu and not better than the best (1): refused, 11 (4) taken.
    w = Cube(table(2, {"00": 1, "01": 3, "10": 5, "11": 4}), 2)
    res = tabu.search(w, max_iter=2, tenure_enter=1, tenure_leave=1, **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [1, 3, 4]
    assert res.fun == 1 and res.best_iteration == 0
    np.testing.assert_array_equal(res.x, [0, 0])


def test_aspiration_accepts_a_tabu_move_that_beats_the_best():
    # 000 -> 001 -> 011 -> 111 (descent); from 111 every move undoes a recent
    # flip, so all are tabu with tenure 5; 110 (1) beats the best (7): taken.
    vals = {"000": 10, "001": 9, "011": 8, "111": 7, "110": 1}
    w = Cube(table(3, vals), 3)
    res = tabu.search(w, max_iter=4, tenure_enter=5, tenure_leave=1, **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [10, 9, 8, 7, 1]
    assert res.fun == 1 and w.state == 0b110


def test_aspiration_beats_a_non_tabu_alternative():
    # as above with a fourth, never-flipped bit: from 0111 the only non-tabu
    # move is to 1111 (20); aspiration must prefer the tabu 0110 (1)
    vals = {"0000": 10, "0001": 9, "0011": 8, "0111": 7, "0110": 1}
    res = tabu.search(Cube(table(4, vals), 4), max_iter=4, tenure_enter=5, tenure_leave=1,
                      **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [10, 9, 8, 7, 1]
    res = tabu.search(Cube(table(4, {**vals, "0110": 7.5}), 4), max_iter=4, tenure_enter=5,
                      tenure_leave=1, **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [10, 9, 8, 7, 20]  # 7.5 does not beat 7: refused


class Graph(Walker):
    """A hand-made vertex graph: states are bases (frozensets), edges[state] = {entering: leaving}."""

    def __init__(self, c, start, values, edges):
        self.n_variables, self.state = c, frozenset(start)
        self.values = {frozenset(k): float(v) for k, v in values.items()}
        self.edges = {frozenset(k): dict(v) for k, v in edges.items()}

    def _target(self, e, l):
        return (self.state - {l}) | {e}

    @property
    def value(self):
        return self.values[self.state]

    @property
    def x(self):
        return np.array(sorted(self.state), float)

    def basis(self):
        return np.array(sorted(self.state))

    def candidates(self):
        E = list(self.edges[self.state])
        L = [self.edges[self.state][e] for e in E]
        return np.array(E), np.array(L), np.array([self.values[self._target(e, l)] for e, l in zip(E, L)])

    def evaluate(self, entering):
        l = self.edges[self.state].get(entering)
        return (-1, float("nan")) if l is None else (l, self.values[self._target(entering, l)])

    def pivot(self, entering, leaving):
        assert self.edges[self.state][entering] == leaving
        self.state = self._target(entering, leaving)


def test_candidate_list_scan_applies_aspiration():
    # it1: local minimum {0,1} -> {1,2}; it2: remake, list [0 (tabu, refused), 3 (taken), 5];
    # it3: scanning the list, entering 0 (still tabu) now leads below the best: taken,
    # not the admissible 5 after it.
    values = {(0, 1): 1, (1, 2): 5, (1, 3): 6, (2, 3): 3, (2, 5): 4, (0, 2): 0.5, (3, 5): 2.5}
    edges = {(0, 1): {2: 0, 3: 0}, (1, 2): {0: 2, 3: 1, 5: 1}, (2, 3): {0: 3, 5: 2, 1: 3}}
    w = Graph(6, (0, 1), values, edges)
    res = tabu.search(w, max_iter=3, tenure_enter=5, tenure_leave=1, **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [1, 5, 3, 0.5]
    assert res.n_remakes == 2


def test_all_tabu_and_no_aspiration_takes_best_tabu_move():
    vals = {"000": 10, "001": 9, "011": 8, "111": 7, "110": 7.5, "101": 9.5}
    w = Cube(table(3, vals), 3)
    res = tabu.search(w, max_iter=4, tenure_enter=5, tenure_leave=1, **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [10, 9, 8, 7, 7.5]
    assert res.fun == 7


def test_escape_from_local_minimum_takes_best_non_tabu_neighbour():
    # local minimum 000 (0): neighbours 001 (5), 010 (3), 100 (4) -> 010 although worse
    w = Cube(table(3, {"000": 0, "001": 5, "010": 3, "100": 4}), 3)
    res = tabu.search(w, max_iter=1, **NO_DIVERSIFY)
    assert res.history["value"].tolist() == [0, 3]


@pytest.mark.parametrize("seed", range(5))
def test_tenures_respected_except_by_aspiration(seed):
    rng = np.random.default_rng(seed)
    d, te, tl = 7, 3, 2
    w = Cube(rng.normal(size=2 ** d), d)
    res = tabu.search(w, max_iter=400, random_state=seed, tenure_enter=te, tenure_leave=tl)
    left, entered = {}, {}
    best = res.history["best"]
    value = res.history["value"]
    for t, (e, l) in enumerate(w.moves, start=1):
        tabu_move = t - left.get(e, -10**9) <= te or t - entered.get(l, -10**9) <= tl
        if tabu_move:  # with d=7 > te+tl there is always a non-tabu move
            assert value[t] < best[t - 1], f"tabu move at iteration {t} without aspiration"
        left[l] = entered[e] = t
    assert res.nit == 400 and np.any(res.history["mode"] == 1)


def test_diversification_starts_after_k_stagnating_iterations_and_lasts_m_moves():
    d = 10  # c = 20: k = ceil(0.10 * 20) = 2, m = ceil(0.15 * 20) = 3
    w = Cube(np.zeros(2 ** d), d)
    res = tabu.search(w, max_iter=20, random_state=0)
    assert (res.stagnation_window, res.diversification_moves) == (2, 3)
    modes = res.history["mode"].tolist()
    #          start, it1, it2 | it3-5 diversify | it6, it7 | it8-10 | ...
    assert modes[:16] == [0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1]
    assert tabu.MODES[1] == "diversify"


def test_no_diversification_while_the_best_keeps_improving():
    d = 10
    vals = np.array([-(3.0 ** bin(s).count("1")) for s in range(2 ** d)])
    w = Cube(vals, d)
    res = tabu.search(w, max_iter=15, random_state=0)
    modes = res.history["mode"]
    assert np.all(modes[: d + 1] == 0)  # d improving moves down to 11...1
    assert res.fun == -(3.0 ** d)
    assert np.any(modes[d + 1:] == 1)  # stuck afterwards: diversification


def test_diversification_prefers_rarely_basic_variables():
    # flat values: eq. 25 is only the frequency term; a variable that has never
    # been basic must be preferred to entering one that has been basic
    d = 10
    w = Cube(np.zeros(2 ** d), d)
    res = tabu.search(w, max_iter=5, random_state=1)
    div = [t for t in range(1, 6) if res.history["mode"][t] == 1]
    assert div == [3, 4, 5]
    entering = [w.moves[t - 1][0] for t in div]
    assert all(e % 2 == 1 for e in entering)  # odd variables start nonbasic and never entered before


def test_best_point_is_returned():
    rng = np.random.default_rng(3)
    d = 8
    vals = rng.normal(size=2 ** d)
    w = Cube(vals, d)
    res = tabu.search(w, max_iter=300, random_state=0)
    h = res.history
    assert res.fun == h["value"].min() == h["best"][-1]
    state = int(sum(int(b) << i for i, b in enumerate(res.x)))
    assert vals[state] == res.fun
    assert np.all(np.diff(h["best"]) <= 0)
    assert res.fun <= w.value


def test_same_seed_same_run():
    rng = np.random.default_rng(5)
    vals = np.round(rng.normal(size=2 ** 8))  # many ties
    runs = [tabu.search(Cube(vals, 8), max_iter=200, random_state=s) for s in (7, 7, 8)]
    np.testing.assert_array_equal(runs[0].history, runs[1].history)
    assert not np.array_equal(runs[0].history, runs[2].history)


def test_time_limit_callback_and_interrupt_return_best_so_far():
    rng = np.random.default_rng(6)
    vals = rng.normal(size=2 ** 6)

    res = tabu.search(Cube(vals, 6, slow=0.002), max_iter=10_000, time_limit=0.05)
    assert res.status == 1 and 5 < res.nit < 100 and res.fun == res.history["value"].min()

    res = tabu.search(Cube(vals, 6), callback=lambda it, walker, best: it == 7)
    assert res.status == 2 and res.nit == 7 and len(res.history) == 8

    w = Cube(vals, 6, interrupt_at=10)
    res = tabu.search(w, max_iter=100)
    assert res.status == 3 and res.nit == 9 and not res.success
    state = int(sum(int(b) << i for i, b in enumerate(res.x)))
    assert vals[state] == res.fun == res.history["value"].min()


def test_no_move_status_and_bad_walker():
    res = tabu.search(Cube([4.0], 0), max_iter=10)
    assert res.status == 4 and res.nit == 0 and res.fun == 4.0
    with pytest.raises(TypeError):
        tabu.search(object())
    with pytest.raises(ValueError):
        tabu.search(Cube([0.0, 1.0], 1), max_iter=-1)


def test_default_tenures():
    assert tabu.default_tenures(8) == (1, 1)
    assert tabu.default_tenures(800) == (10, 2)
    assert tabu.default_tenures(20) == (2, 1)
    res = tabu.search(Cube(np.zeros(2 ** 10), 10), max_iter=1)
    assert (res.tenure_enter, res.tenure_leave) == tabu.default_tenures(20)


def test_epts_on_scipy_style_polytope():
    # a concave function on the square [0, 1]^2 cut by x + y <= 1.5
    f = lambda u: -float((u[0] - 0.2) ** 2 + (u[1] - 0.3) ** 2)  # noqa: E731
    fv = lambda U: -((U[:, 0] - 0.2) ** 2 + (U[:, 1] - 0.3) ** 2)  # noqa: E731
    a = tabu.epts(f, [[1.0, 1.0]], [1.5], bounds=(0, 1), max_iter=30, random_state=0)
    b = tabu.epts(fv, [[1.0, 1.0]], [1.5], bounds=(0, 1), max_iter=30, random_state=0, vectorized=True)
    assert a.fun == pytest.approx(-(0.8 ** 2 + 0.3 ** 2))
    np.testing.assert_allclose(a.x, [1.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(a.history, b.history)
    c = tabu.epts(f, [[1.0, 1.0]], [1.5], bounds=(0, 1), max_iter=0, x0=[1.0, 0.5])
    assert c.nit == 0 and c.fun == pytest.approx(f([1.0, 0.5]))
    with pytest.raises(ValueError):
        tabu.epts(f, [[1.0, 1.0]], [1.5], bounds=(0, 1), x0=[0.5, 0.5])  # not a vertex
