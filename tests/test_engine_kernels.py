"""The structured walker's fast kernel paths (gto/engine/_kernels.py) against their
general versions and a literal evaluation: the fast paths must give the same bits,
since the search's moves depend on exact comparisons of the values."""
import numpy as np
import pytest

from gto.engine import _kernels as K

from test_walker import make_walker


def _literal_product(LE, ELt, ERt, point_leaves, sides, weight, d, el, er):
    """Each point's weighted product error once decision d's errors become (el, er)."""
    out = np.empty(len(weight))
    for i in range(len(weight)):
        acc = weight[i]
        for k in point_leaves[i][point_leaves[i] >= 0]:
            s = sides[k, d]
            acc *= LE[i, k] + (el[i] - ELt[d, i] if s < 0 else (er[i] - ERt[d, i] if s > 0 else 0.0))
        out[i] = acc
    return out


def _evaluate(P, degrees, d, el, er):
    """``C * PL(el) * PR(er)`` of decision d's rows of the leaf terms."""
    L1 = (P.shape[0] - 4) // 2
    PL = sum(P[g] * el**g for g in range(degrees[0, d] + 1))
    PR = sum(P[L1 + g] * er**g for g in range(degrees[1, d] + 1))
    return P[2 * L1] * PL * PR


@pytest.mark.parametrize("seed", range(8))
def test_simple_product_terms_are_the_general_ones_bit_for_bit(seed):
    classes = (0, 1, 2)[: 2 + seed % 2]
    P, W, X, y = make_walker(seed, "product", classes=classes, D=2 + seed % 3)
    L = P.layout
    plan = K.leaf_plan(L.point_leaves, L.sides)
    rng = np.random.default_rng(seed)
    LE = W.LE + rng.uniform(0, 2, W.LE.shape)  # arbitrary cached errors
    shape = (W.problem.layout.D,) + W._terms.shape[1:]
    checked = 0
    for d in range(L.D):
        simple = plan[d, 0, 0] != K.NOT_SIMPLE
        counts = [((L.sides[L.point_leaves[i][L.point_leaves[i] >= 0], d] == s).sum())
                  for i in range(P.data.N) for s in (-1, 1)]
        assert simple == (max(counts) <= 1)
        if not simple:
            continue
        checked += 1
        fast, general = np.full(shape[1:], 7.0), np.full(shape[1:], 7.0)
        got = K.simple_product_terms(d, W.ELt, W.ERt, LE, P.data.weight, plan[d], fast)
        want = K.product_terms(d, W.ELt, W.ERt, LE, L.point_leaves, L.sides, P.data.weight, general)
        assert got == want
        L1 = (shape[1] - 4) // 2  # the rows the product reads: PL and PR up to their degrees, C
        rows = [*range(got[0] + 1), *(L1 + g for g in range(got[1] + 1)), 2 * L1]
        np.testing.assert_array_equal(fast[rows], general[rows])
        el, er = rng.uniform(0, 3, P.data.N), rng.uniform(0, 3, P.data.N)
        degrees = np.array([[got[0]] * L.D, [got[1]] * L.D])
        np.testing.assert_allclose(
            _evaluate(fast, degrees, d, el, er),
            _literal_product(LE, W.ELt, W.ERt, L.point_leaves, L.sides, P.data.weight, d, el, er),
            rtol=1e-12)
    assert checked or seed % 2  # two classes: a decision always has a simple plan


def test_leaf_terms_take_the_general_path_where_a_side_holds_two_class_leaves():
    """A leaf_plan marked not simple is computed by the general loop (degree 2)."""
    P, W, X, y = make_walker(3, "product", classes=(0, 1), D=3)
    L = P.layout
    plan = K.leaf_plan(L.point_leaves, L.sides)
    for d in range(L.D):
        plan[d, 0, 0] = K.NOT_SIMPLE
    terms, degrees = np.zeros_like(W._terms), np.zeros_like(W._degrees)
    K.leaf_terms(W.ELt, W.ERt, W.LE, L.point_leaves, L.sides, P.data.weight, terms, degrees,
                 np.ones(L.D, dtype=bool), True, plan)
    want, want_degrees = np.zeros_like(W._terms), np.zeros_like(W._degrees)
    K.leaf_terms(W.ELt, W.ERt, W.LE, L.point_leaves, L.sides, P.data.weight, want, want_degrees,
                 np.ones(L.D, dtype=bool), True, K.leaf_plan(L.point_leaves, L.sides))
    np.testing.assert_array_equal(terms, want)
    np.testing.assert_array_equal(degrees, want_degrees)


def _simple_case(rng, N=300, K=9, D=4, A=5):
    """Leaves, sides and class leaves where every decision is simple: below decision
    d, three leaves on each side, and each point has at most one of them per side
    (rejection), plus up to A leaves in random order; leaf errors with zeros, inf
    and NaN, decision errors with inf and NaN, some zero weights."""
    sides = np.zeros((K, D), dtype=np.int64)
    for d in range(D):
        below = rng.permutation(K)[:6]
        sides[below[:3], d], sides[below[3:], d] = -1, 1
    point_leaves = np.full((N, A), -1, dtype=np.int64)
    for i in range(N):
        while True:
            leaves = rng.permutation(K)[: rng.integers(0, A + 1)]
            s = sides[leaves]
            if ((s < 0).sum(0) <= 1).all() and ((s > 0).sum(0) <= 1).all():
                break
        point_leaves[i, : len(leaves)] = leaves
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, 1e-300]
    LE = np.where(rng.random((N, K)) < 0.1, rng.choice(special, (N, K)), rng.uniform(0, 3, (N, K)))
    ELt, ERt = (np.where(rng.random((D, N)) < 0.05, rng.choice(special, (D, N)),
                         rng.uniform(0, 3, (D, N))) for _ in range(2))
    weight = rng.uniform(0.5, 2, N) * (rng.random(N) > 0.05)
    return LE, ELt, ERt, point_leaves, sides, weight


def _literal_simple_terms(LE, ELt, ERt, point_leaves, sides, weight, d):
    """Rows PL0, PL1, PR0, PR1, C and the degrees of ``simple_product_terms``, from its
    docstring: b = LE[i, k] - E[d, i] and (b, 0 * b + 1) for the leaf k on a side,
    (1, 0) without one; C = weight[i] times the other class leaves' errors in order."""
    rows = np.empty((5, len(weight)))
    for i in range(len(weight)):
        rows[:, i] = (1.0, 0.0, 1.0, 0.0, weight[i])
        for k in point_leaves[i][point_leaves[i] >= 0]:
            s = int(sides[k, d])
            if s == 0:
                rows[4, i] = rows[4, i] * LE[i, k]
            else:
                b = LE[i, k] - (ELt if s < 0 else ERt)[d, i]
                rows[1 + s: 3 + s, i] = (b, 0.0 * b + 1.0)
    return rows, (int((rows[1] != 0).any()), int((rows[3] != 0).any()))


@pytest.mark.parametrize("seed", range(6))
def test_simple_product_terms_give_the_bits_of_their_formulas(seed):
    """Every written value, NaN and inf included, bit for bit; the other rows untouched."""
    rng = np.random.default_rng(seed)
    LE, ELt, ERt, point_leaves, sides, weight = _simple_case(rng)
    plan = K.leaf_plan(point_leaves, sides)
    L1 = point_leaves.shape[1] + 1
    for d in range(sides.shape[1]):
        assert plan[d, 0, 0] != K.NOT_SIMPLE
        P = np.full((2 * L1 + 4, len(weight)), 7.0)
        with np.errstate(invalid="ignore", over="ignore"):
            want, want_degrees = _literal_simple_terms(LE, ELt, ERt, point_leaves, sides, weight, d)
        assert K.simple_product_terms(d, ELt, ERt, LE, weight, plan[d], P) == want_degrees
        written = [0, 1, L1, L1 + 1, 2 * L1]
        np.testing.assert_array_equal(P[written].view(np.int64), want.view(np.int64))
        assert (np.delete(P, written, axis=0) == 7.0).all()
    assert np.isnan(want).any() and np.isinf(want).any()


def _ratio_reference(G, rabs, ybasic, in_block, tol, rtol):
    """The ratio tests literally, in Python: per edge and sign the first row, in
    order, with ``|r| < best * |g|`` (|g| above the threshold, the sign's slot),
    again with the relative floor if the winner's |g| is below it."""
    m, T = G.shape
    steps, rows = np.full(2 * m, np.inf), np.full(2 * m, -1)
    for q in range(m):
        g = G[q]
        top = 0.0  # the largest |g| outside the block; NaN is never above it
        for t in range(T):
            if not in_block[t] and abs(g[t]) > top:
                top = abs(g[t])
        floor = max(tol, rtol * top)
        for thr in (tol, floor):
            best, row = [np.inf, np.inf], [-1, -1]
            for t in range(T):
                a, s = abs(g[t]), 0 if (g[t] > 0) == ybasic[t] else 1
                if a > thr and rabs[t] < best[s] * a:
                    best[s], row[s] = rabs[t] / a, t
            steps[q], rows[q], steps[m + q], rows[m + q] = best[0], row[0], best[1], row[1]
            if all(r < 0 or abs(g[r]) > floor for r in row):
                break
    return steps, rows


def _ratio_case(rng, m, T, ties):
    """Rates and slacks with exact ties and degenerate (zero) slacks where ``ties``,
    some rates below the floors, block rows at inf."""
    if ties:
        G = rng.choice([-2.0, -1.0, -0.5, -1e-8, 0.0, 1e-8, 0.5, 1.0, 2.0, 3.0], (m, T))
        rabs = rng.choice([0.0, 0.5, 1.0, 1.5, 3.0], T)
    else:
        G = rng.normal(size=(m, T)) * rng.choice([1.0, 1e-6], (m, T), p=[0.9, 0.1])
        rabs = np.abs(rng.normal(size=T)) * rng.choice([1.0, 0.0], T, p=[0.95, 0.05])
    in_block = np.zeros(T, dtype=bool)
    in_block[rng.choice(T, min(m, T), replace=False)] = True
    rabs[in_block] = np.inf
    return G, rabs, rng.random(T) < 0.5, in_block


@pytest.mark.parametrize("seed", range(40))
def test_ratio_tests_follow_the_sequential_rule(seed):
    rng = np.random.default_rng(seed)
    m, T = int(rng.integers(1, 8)), int(rng.integers(1, 300))
    G, rabs, ybasic, in_block = _ratio_case(rng, m, T, ties=seed % 2 == 0)
    tol, rtol = (1e-9, 1e-7) if seed % 3 else (1e-3, 0.2)  # large floors: second attempts
    _assert_literal_ratio_tests(G, rabs, ybasic, in_block, tol, rtol)


def _used_ratio_scratch(m, rng):
    """A ratio-test scratch for up to more columns than needed and full of earlier
    contents: every mark set, states and results at random (the compiled loop reuses
    one for every test)."""
    scratch = K.ratio_scratch(m + int(rng.integers(0, 3)))
    for a in scratch[:5]:
        a[...] = rng.integers(-5, 5, a.shape)
    scratch[5][...] = 0xFF  # the marks, also as words
    return scratch


def _assert_literal_ratio_tests(G, rabs, ybasic, in_block, tol, rtol):
    """``ratio_all`` and ``ratio_one`` of every edge give the literal rule's rows and
    steps, bit for bit, in fresh arrays and in one used scratch alike."""
    with np.errstate(invalid="ignore"):  # inf * 0 in the literal rule, as in the kernels
        want = _ratio_reference(G, rabs, ybasic, in_block, tol, rtol)
    m = G.shape[0]
    scratch = _used_ratio_scratch(m, np.random.default_rng(G.shape[1]))
    for steps, rows in (K.ratio_all(G, rabs, ybasic, in_block, tol, rtol),
                        K.ratio_all_into(G, rabs, ybasic, in_block, tol, rtol, scratch)):
        np.testing.assert_array_equal(rows[:2 * m], want[1])
        np.testing.assert_array_equal(steps[:2 * m], want[0])
    for q in range(m):
        for sigma, j in ((1.0, q), (-1.0, m + q)):
            for step, row in (K.ratio_one(G, q, sigma, rabs, ybasic, in_block, tol, rtol),
                              K.ratio_one_into(G, q, sigma, rabs, ybasic, in_block, tol, rtol,
                                               scratch)):
                assert row == want[1][j]
                np.testing.assert_array_equal(step, want[0][j])


def _ratio_hard_case(rng, m, T):
    """Columns longer than the kernels' exact prefix with what can trip a filter:
    near ties (steps a few ulps apart, from a shared quotient), exact ties, zero,
    NaN and inf slacks, |g| at and next to tol, rows far above the rest (relative
    floor above some winners), NaN and inf rates, a sign met only late, blocked
    rows and columns without a blocking row."""
    tol = 1e-3
    a = rng.choice([0.5, 1.0, 2.0, 3.0], T) * np.where(rng.random(T) < 0.5, 1.0,
                                                        rng.uniform(0.5, 2.0, T))
    G = np.where(rng.random((m, T)) < 0.5, -1.0, 1.0) * a * rng.choice([1.0, 1.0, 0.3], (m, T))
    q0 = rng.uniform(0.5, 2.0)  # one column's steps: q0 up to a few ulps, or above
    rabs = q0 * np.abs(G[rng.integers(m)]) * np.where(
        rng.random(T) < 0.5, 1 + rng.integers(-3, 4, T) * 2.0**-52, rng.uniform(1.0, 3.0, T))
    special = rng.random((m, T))
    G[special < 0.02] = tol * rng.choice([-1.0, 1.0])
    G[(special >= 0.02) & (special < 0.03)] = np.nextafter(tol, 1.0)
    G[(special >= 0.03) & (special < 0.04)] *= rng.choice([1e5, 1e7])
    G[(special >= 0.04) & (special < 0.045)] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
    slack = rng.random(T)
    rabs[slack < rng.choice([0.0, 0.003])] = 0.0
    rabs[(slack >= 0.03) & (slack < 0.05)] = np.nan
    rabs[(slack >= 0.05) & (slack < 0.07)] = np.inf
    ybasic = rng.random(T) < 0.5 if rng.random() < 0.7 else np.arange(T) >= rng.integers(T)
    in_block = np.zeros(T, dtype=bool)
    in_block[rng.choice(T, min(m, T), replace=False)] = True
    rabs[in_block] = np.inf
    if rng.random() < 0.2:
        G[rng.integers(m)] = 0.0  # no row can block this edge
    return G, rabs, ybasic, in_block, tol


@pytest.mark.parametrize("seed", range(60))
def test_ratio_tests_skip_only_rows_that_cannot_take_over(seed):
    """The kernels skip the rows their vectorised sweep leaves unmarked: on long
    columns of near ties and special values they still give the literal rule's
    rows and steps, bit for bit, first pass and relative floor alike."""
    rng = np.random.default_rng(1000 + seed)
    m, T = int(rng.integers(1, 9)), int(rng.integers(97, 700))
    G, rabs, ybasic, in_block, tol = _ratio_hard_case(rng, m, T)
    _assert_literal_ratio_tests(G, rabs, ybasic, in_block, tol, (1e-7, 1e-4, 0.05)[seed % 3])


@pytest.mark.parametrize("steps", ["falling", "falling by ulps", "rising", "one late"])
@pytest.mark.parametrize("chunks", [0, 1, 3])
def test_ratio_tests_in_chunks_follow_the_rule_at_chunk_edges(steps, chunks):
    """The kernels mark and walk the rows after their prefix a chunk at a time, each
    chunk against the states it starts with: with a new winner at every row (steps
    falling, far apart or by an ulp), at none, or only at one late row, and columns
    ending a row before, at and a row after a chunk's edge, they give the literal
    rule's rows and steps, bit for bit."""
    rng = np.random.default_rng(chunks)
    for T in K.RATIO_PREFIX + chunks * K.RATIO_CHUNK + np.array([-1, 0, 1]):
        m = 4
        a = rng.uniform(0.5, 2.0, (m, T))
        t = np.arange(T)
        step = {"falling": 2.0 - t / T, "falling by ulps": 1.0 + (T - t) * 2.0**-52,
                "rising": 1.0 + t / T, "one late": np.where(t == T - 2, 0.5, 1.0 + t / T)}[steps]
        ybasic = rng.random(T) < 0.5
        G = np.where(ybasic, a, -a)  # (g > 0) == ybasic: every row blocks the same sign
        rabs = step * a[0]  # column 0's steps exactly, the others' scaled at random
        in_block = np.zeros(T, dtype=bool)
        _assert_literal_ratio_tests(G, rabs, ybasic, in_block, 1e-9, 1e-7)


@pytest.mark.parametrize("objective", ["product", "minimum"])
@pytest.mark.parametrize("seed", range(4))
def test_zero_step_moves_are_scored_once_with_the_same_bits(objective, seed):
    """table_sums over all slots, zero-step ones among them, equals scoring each
    slot alone (no sharing); a non-finite rate row is scored on its own."""
    P, W, X, y = make_walker(seed, objective, classes=(0, 1, 2)[: 2 + seed % 2])
    for d in range(P.layout.D):
        W._refresh(d)
    L = P.layout
    K.leaf_terms(W.ELt, W.ERt, W.LE, L.point_leaves, L.sides, P.data.weight, W._terms, W._degrees,
                 np.ones(L.D, dtype=bool), objective == "product", W._plan)
    slots = np.flatnonzero(W._valid)
    coef = W._coef.copy()
    coef[slots[::2]] = 0.0  # half the moves of zero step, of every decision
    coef[slots[1::4]] = -0.0
    H = W._H.copy()
    args = (W.Zt, H, W._terms, W._degrees, P.data.weight, P.p, objective == "product")
    j = slots[2]
    H[j // W._width, j % W._width % P.data.m, 0] = np.inf  # this row's zero step is not at z
    together = K.table_sums(slots, coef, W._width, *args)
    alone = np.array([K.table_sums(slots[i:i + 1], coef, W._width, *args)[0]
                      for i in range(len(slots))])
    np.testing.assert_array_equal(together, alone)
    zero = coef[slots] == 0
    by_decision = slots // W._width
    rate_row = slots % W._width % P.data.m
    infinite = (by_decision == j // W._width) & (rate_row == j % W._width % P.data.m)
    for d in range(P.layout.D):
        shared = zero & (by_decision == d) & ~infinite
        assert len(np.unique(together[shared, 0])) <= 1  # every zero step of d: one value
    assert np.isnan(together[list(slots).index(j), 0]) or objective == "minimum"


def _literal_move_sums(z, h, c, d, ELt, ERt, LE, sides, point_leaves, weight, p, product):
    """move_sums written as one loop over the points, in plain Python floats: per
    point the product (minimum) over its class leaves, in order up to the first -1,
    of the leaf error changed by the point's change in el or er by the leaf's side."""
    s0 = s1 = 0.0
    for i in range(len(z)):
        v = z[i] + c * h[i]
        el, er = max(1.0 + v, 0.0) ** p, max(1.0 - v, 0.0) ** p
        dl, dr = el - ELt[d, i], er - ERt[d, i]
        acc = 1.0 if product else np.inf
        for k in point_leaves[i]:
            if k < 0:
                break
            s = sides[k, d]
            e = LE[i, k] + (dl if s < 0 else (dr if s > 0 else 0.0))
            acc = acc * e if product else min(acc, e)
        s0 += weight[i] * acc
        s1 += weight[i] if not product and acc > K.COUNT_TOL else 0.0
    return s0, s1


@pytest.mark.parametrize("product", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_move_sums_give_the_bits_of_a_literal_loop(product, seed):
    """The kernel's passes (changes, one pass per leaf slot, sums in order) give the
    sums of one literal loop over the points, bit for bit, with points of 0 to A
    class leaves in any order and on any side, zero, inf and NaN errors (the
    product only: Python's and numba's min order NaN alike only as first argument),
    zero weights and zero steps."""
    rng = np.random.default_rng(seed)
    N, n_leaves, D, A = 300, 9, 4, 4
    sides = rng.integers(-1, 2, (n_leaves, D)).astype(np.int8)
    point_leaves = np.full((N, A), -1, dtype=np.int64)
    for i in range(N):
        leaves = rng.permutation(n_leaves)[: rng.integers(0, A + 1)]
        point_leaves[i, : len(leaves)] = leaves
    special = [0.0, -0.0, np.inf, 1e300, 1e-300] + ([np.nan, -np.inf] if product else [])
    LE = np.where(rng.random((N, n_leaves)) < 0.1, rng.choice(special, (N, n_leaves)),
                  rng.uniform(0, 3, (N, n_leaves)))
    ELt, ERt = (np.where(rng.random((D, N)) < 0.05, rng.choice(special, (D, N)),
                         rng.uniform(0, 3, (D, N))) for _ in range(2))
    weight = rng.uniform(0.5, 2, N) * (rng.random(N) > 0.05)
    z = rng.uniform(-2, 2, N) * (rng.random(N) > 0.1)
    h = rng.normal(size=N)
    for p in (1, 2):
        for d in range(D):
            for c in (0.0, 0.3, -1.7):
                with np.errstate(invalid="ignore", over="ignore"):
                    want = _literal_move_sums(z, h, c, d, ELt, ERt, LE, sides, point_leaves, weight, p,
                                              product)
                got = np.array(K.move_sums(z, h, c, d, ELt, ERt, LE, sides, point_leaves, weight, p,
                                           product))
                want = np.array(want)  # NaN's sign is Python's or the CPU's: the search reads NaN as inf
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
                np.testing.assert_array_equal(np.where(np.isnan(got), 0.0, got).view(np.int64),
                                              np.where(np.isnan(want), 0.0, want).view(np.int64))


@pytest.mark.parametrize("seed", range(6))
def test_product_move_sums_give_the_bits_of_a_literal_loop(seed):
    """The product's passes (a pass per leaf, a factor 1.0 off the class leaves, the sum
    in point order) give the sums of the literal loop over each point's class leaves
    in increasing leaf order (``point_leaves`` as the layout lists them), bit for bit:
    points of 0 to 6 class leaves (products of 3 and more factors depend on their
    order), zero, inf, NaN, huge and tiny errors, zero weights and steps, p = 1 and 2,
    the arrays column-major (as the walker holds them) or row-major."""
    rng = np.random.default_rng(seed)
    N, n_leaves, D = 300, 6, 5
    sides = rng.integers(-1, 2, (n_leaves, D)).astype(np.int8)
    mask = rng.random((N, n_leaves)) < rng.uniform(0.2, 0.9)
    point_leaves = np.full((N, n_leaves), -1, dtype=np.int64)
    for i in range(N):
        leaves = np.flatnonzero(mask[i])
        point_leaves[i, : len(leaves)] = leaves
    special = [0.0, -0.0, np.inf, 1e300, 1e-300, np.nan, -np.inf]
    rate = 0.0 if seed < 3 else 0.002 * seed  # rare: one NaN or inf makes the whole sum NaN or inf
    LE = np.where(rng.random((N, n_leaves)) < rate, rng.choice(special, (N, n_leaves)),
                  rng.uniform(0, 3, (N, n_leaves)))
    ELt, ERt = (np.where(rng.random((D, N)) < rate, rng.choice(special, (D, N)),
                         rng.uniform(0, 3, (D, N))) for _ in range(2))
    weight = rng.uniform(0.5, 2, N) * (rng.random(N) > 0.05)
    z = rng.uniform(-2, 2, N) * (rng.random(N) > 0.1)
    h = rng.normal(size=N)
    for order in ("F", "C"):
        LEo, masko = np.asarray(LE, order=order), np.asarray(mask, order=order)
        for p in (1, 2):
            for d in range(D):
                for c in (0.0, 0.3, -1.7):
                    with np.errstate(invalid="ignore", over="ignore"):
                        want = np.array(_literal_move_sums(z, h, c, d, ELt, ERt, LE, sides, point_leaves,
                                                           weight, p, True))
                    got = np.array(K.product_move_sums(z, h, c, d, ELt, ERt, LEo, sides, masko, weight, p))
                    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))  # NaN's sign aside
                    np.testing.assert_array_equal(np.where(np.isnan(got), 0.0, got).view(np.int64),
                                                  np.where(np.isnan(want), 0.0, want).view(np.int64))


def test_product_move_sums_into_a_used_scratch_gives_the_bits_of_fresh_arrays():
    """The compiled loop's ``product_move_sums_into`` reuses one scratch for every move:
    whatever the scratch holds (NaN, or the last move's rows, of another decision and
    step), the sums are those of ``product_move_sums``, bit for bit."""
    rng = np.random.default_rng(7)
    N, n_leaves, D = 200, 5, 4
    sides = rng.integers(-1, 2, (n_leaves, D)).astype(np.int8)
    mask = np.asfortranarray(rng.random((N, n_leaves)) < 0.6)
    LE = np.asfortranarray(rng.uniform(0, 3, (N, n_leaves)))
    ELt, ERt = rng.uniform(0, 3, (D, N)), rng.uniform(0, 3, (D, N))
    weight = rng.uniform(0.5, 2, N)
    z, h = rng.uniform(-2, 2, N), rng.normal(size=N)
    work = np.full((3, N), np.nan)
    for d in range(D):
        for c in (0.0, 0.3, -1.7):
            for p in (1, 2):
                want = K.product_move_sums(z, h, c, d, ELt, ERt, LE, sides, mask, weight, p)
                got = K.product_move_sums_into(z, h, c, d, ELt, ERt, LE, sides, mask, weight, p, work)
                assert np.array(got).view(np.int64).tolist() == np.array(want).view(np.int64).tolist()


def _literal_vertex_update(X1t, theta, d, Zt, ELt, ERt, LE, sides, point_leaves, weight, p,
                           product, child_kind, child_index, leaf_ok, wrong):
    """vertex_update written as one loop over the points, in plain Python floats."""
    s0 = s1 = count = 0.0
    for i in range(X1t.shape[1]):
        z = 0.0
        for a in range(X1t.shape[0]):
            z += float(theta[a]) * float(X1t[a, i])
        crossed = (z > K.BOUNDARY_TOL) != (Zt[d, i] > K.BOUNDARY_TOL)
        Zt[d, i] = z
        el, er = max(1.0 + z, 0.0) ** p, max(1.0 - z, 0.0) ** p
        dl, dr = el - ELt[d, i], er - ERt[d, i]
        ELt[d, i], ERt[d, i] = el, er
        for k in range(LE.shape[1]):
            LE[i, k] += dl if sides[k, d] < 0 else (dr if sides[k, d] > 0 else 0.0)
        if crossed:
            wrong[i] = not leaf_ok[i, K.reached_leaf(Zt, i, child_kind, child_index)]
        acc = 1.0 if product else np.inf
        for k in point_leaves[i][point_leaves[i] >= 0]:
            acc = acc * LE[i, k] if product else min(acc, LE[i, k])
        s0 += weight[i] * acc
        s1 += weight[i] if not product and acc > K.COUNT_TOL else 0.0
        count += weight[i] if wrong[i] else 0.0
    return s0, s1, count


@pytest.mark.parametrize("objective", ["product", "minimum"])
@pytest.mark.parametrize("seed", range(6))
def test_vertex_update_gives_the_bits_of_a_literal_update(objective, seed):
    """Moving one decision to new weights: the values, decision and leaf errors,
    misclassified flags and sums of the kernel's separate passes are those of
    one literal pass over the points, bit for bit (the search compares them
    exactly).  The sums start from 0.0, in the order of theta's entries (the
    kernel takes them three at a time)."""
    p = 1 + seed % 2
    P, W, X, y = make_walker(seed, objective, p=p, N=80, classes=(0, 1, 2)[: 2 + seed % 2])
    L, rng = P.layout, np.random.default_rng(seed)
    for d in range(P.layout.D):
        theta = W.blocks[d].theta + rng.normal(size=P.data.m) * (0.0 if d == seed % 3 else 0.5)
        got = [W.Zt.copy(), W.ELt.copy(), W.ERt.copy(), W.LE.copy(), W._wrong.copy()]
        want = [a.copy() for a in got]
        common = (L.sides, L.point_leaves, P.data.weight, p, objective == "product",
                  L.child_kind, L.child_index, L.mask)
        used = rng.normal(size=(4, P.data.N + 3))  # the scratch: any earlier contents, wider
        sums = K.vertex_update(W._X1t, theta, d, got[0], rng.normal(size=P.data.N), *got[1:4],
                               *common, got[4], used)
        literal = _literal_vertex_update(W._X1t, theta, d, *want[:4], *common, want[4])
        assert sums == literal
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def _hinge_heavy_values(rng, shape):
    """Decision values with ties at the hinge (z = -1, 0, 1 exactly, a few ulps
    off), at the boundary tolerance, +-inf (errors inf, and NaN where BLAS
    multiplies them by a 0 coefficient), and magnitudes 1e-3..1e16 (sums of those
    depend on their order)."""
    Z = rng.choice([-1.0, 1.0], shape) * 10 ** rng.uniform(-3, 16, shape)
    special = np.array([-1.0, 1.0, 0.0, -0.0, K.BOUNDARY_TOL, -K.BOUNDARY_TOL,
                        np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0),
                        np.nextafter(-1.0, -2.0), np.nextafter(-1.0, 0.0), np.inf, -np.inf])
    pick = rng.random(shape) < 0.4
    Z[pick] = rng.choice(special, int(pick.sum()))
    return Z


def _literal_wrong(P, Zt):
    """Misclassified flags by a literal walk of the tree's children (z <= tol goes left)."""
    children = P.layout.template.children
    wrong = np.empty(Zt.shape[1], dtype=bool)
    for i in range(Zt.shape[1]):
        kind, j = "d", 0
        while kind == "d":
            kind, j = children[j][1 if Zt[j, i] > K.BOUNDARY_TOL else 0]
        wrong[i] = not P.layout.mask[i, j]
    return wrong


def _exact_case(case):
    """(problem, walker): random trees of 1, 2, 3, 4, 5, 7 decisions (two and three
    classes, p = 1 and 2), then the complete depth-3 tree with p = 1 and 2 (leaves
    three decisions deep on one side: sums of three terms)."""
    import gto
    from gto.engine._problem import TreeProblem
    from gto.engine._walker import walker_from_theta

    if case < 6:
        D = (1, 2, 3, 4, 5, 7)[case]
        P, W, _, _ = make_walker(case, "product", p=1 + case % 2,
                                 classes=(0, 1, 2)[: 2 + case % 2], D=D, N=80)
        return P, W
    rng = np.random.default_rng(case)
    X = rng.normal(size=(90, 4))
    y = rng.integers(0, 3, 90)
    P = TreeProblem(gto.Tree.complete(3, [0, 1, 2, 0, 1, 2, 0, 1], 4), X, y, p=case - 5)
    return P, walker_from_theta(P, rng.normal(size=(7, 5)), P.objective("product"), rng)


@pytest.mark.parametrize("case", range(8))
def test_exact_errors_give_the_bits_of_the_numpy_formulas(case):
    """The walker's exact recomputation (compiled, in the compiled EPTS loop and in
    TreeWalker.pivot) against the numpy formulas it replaced, bit for bit: decision
    errors, leaf errors ``ELt.T @ SL.T + ERt.T @ SR.T`` (BLAS), misclassified flags
    (a literal tree walk), and the pivoted decision's values ``theta @ X1t``."""
    P, W = _exact_case(case)
    L = P.layout
    rng = np.random.default_rng(case)
    for _ in range(3):
        Zt = _hinge_heavy_values(rng, W.Zt.shape)
        ELt, ERt = np.full_like(Zt, np.nan), np.full_like(Zt, np.nan)
        LE, wrong = np.full((P.data.N, L.K), np.nan), np.zeros(P.data.N, dtype=bool)
        K.exact_errors(Zt, P.p, L.sides, L.child_kind, L.child_index, L.mask, ELt, ERt, LE, wrong)
        want_l, want_r = P.decision_errors(Zt)
        np.testing.assert_array_equal(ELt, want_l)
        np.testing.assert_array_equal(ERt, want_r)
        with np.errstate(invalid="ignore"):  # inf * 0
            want = want_l.T @ L.SL.T + want_r.T @ L.SR.T
        assert np.array_equal(LE.view(np.int64), want.view(np.int64))  # bits, signs of zeros too
        np.testing.assert_array_equal(wrong, _literal_wrong(P, Zt))
        d = int(rng.integers(L.D))
        theta = rng.normal(size=P.data.m) * 10 ** rng.uniform(-2, 6, P.data.m)
        before = Zt.copy()
        K.exact_vertex(W._X1t, theta, d, Zt, P.p, L.sides, L.child_kind, L.child_index, L.mask,
                       ELt, ERt, LE, wrong)
        want_z = before.copy()
        want_z[d] = theta @ W._X1t
        assert np.array_equal(Zt.view(np.int64), want_z.view(np.int64))
        want_l, want_r = P.decision_errors(want_z)
        with np.errstate(invalid="ignore"):
            want = want_l.T @ L.SL.T + want_r.T @ L.SR.T
        assert np.array_equal(LE.view(np.int64), want.view(np.int64))
        np.testing.assert_array_equal(wrong, _literal_wrong(P, want_z))



def _literal_pivot(Binv, G, H, rows, rhs, tight, q, leave):
    """A block pivot's Sherman-Morrison update and new slacks, in plain Python floats:
    ``u = rows[leave] @ Binv``; column c of ``Binv`` (and row c of ``G``, ``H``) loses
    ``u[c] / u[q]`` times column (row) q, which is divided by ``u[q]``; theta =
    ``Binv @ rhs[tight]``; the slacks ``rhs[t] - theta[0] rows[t, 0] - ...``, in order."""
    m = Binv.shape[0]
    u = [0.0] * m
    for a in range(m):
        for c in range(m):
            u[c] += float(rows[leave, a]) * float(Binv[a, c])
    f = [u[c] / u[q] for c in range(m)]
    f[q] = 1.0 - 1.0 / u[q]
    for i in range(m):
        mq = float(Binv[i, q])
        for c in range(m):
            Binv[i, c] -= mq * f[c]
    for M in (G, H):
        mq = M[q].copy()
        for c in range(m):
            if c != q:
                M[c] -= (u[c] / u[q]) * mq
        M[q] *= 1.0 / u[q]
    tight = tight.copy()
    tight[q] = leave
    theta = [sum((float(Binv[a, c]) * float(rhs[tight[c]]) for c in range(m)), 0.0)
             for a in range(m)]
    r = []
    for t in range(rows.shape[0]):
        x = float(rhs[t])
        for a in range(m):
            x -= theta[a] * float(rows[t, a])
        r.append(x)
    return np.array(theta), np.array(r), tight


@pytest.mark.parametrize("seed", range(4))
def test_block_pivot_gives_the_bits_of_a_literal_pivot(seed):
    """A pivot of a walker's block (the kernels' passes over three rows at a time,
    its scratch reused) gives the literal update's Binv, G, H, theta and slacks,
    bit for bit (the compiled search and the Python walker share these kernels;
    the search's moves depend on the bits)."""
    P, W, X, y = make_walker(seed, "product", n=3 + 2 * seed, N=70)
    b = W.blocks[seed % P.layout.D]
    steps, rows = b.ratio_test_all()
    q = int(np.flatnonzero(rows[: b.m] >= 0)[0])
    leave = int(rows[q])
    want = [b.Binv.copy(), b.G.copy(), b.H.copy()]
    theta, r, tight = _literal_pivot(*want, b.rows, b.rhs, b.tight, q, leave)
    work = np.random.default_rng(seed).normal(size=(3, max(b.G.shape[1], b.H.shape[1]) + 2))
    arrays = [a.copy() for a in (b.Binv, b.G, b.H, b._rows_t, b.rhs, b.tight, b.in_block,
                                 b.position, b.ybasic)]
    theta_got, r_got, rabs = b.theta.copy(), b.r.copy(), b.rabs.copy()
    assert K.block_update(*arrays, q, leave, 1.0, theta_got, r_got, rabs, b.coord, b.n_coord,
                          1e-9, 1e-11, work)
    for got, exp in zip(arrays[:3], want):
        np.testing.assert_array_equal(got, exp)
    np.testing.assert_array_equal(arrays[5], tight)
    np.testing.assert_array_equal(theta_got, theta)
    out = np.ones(len(r), dtype=bool)
    out[tight] = False
    np.testing.assert_array_equal(r_got[out], r[out])
    assert np.all(r_got[tight] == 0.0) and np.all(np.isinf(rabs[tight]))
