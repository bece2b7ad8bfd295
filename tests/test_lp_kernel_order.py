"""The hinge LP's edge slopes and leaving row (gto/engine/_lp_kernels.py) against their
plain transcriptions - each column's sums one row at a time, all crossings sorted -
bit for bit: the compiled kernels reorganise the loops (rows classified once, four
columns at once; a heap instead of a sort) but must keep every sum's terms and order,
and the order of the crossings."""
import numpy as np
import pytest

from gto.engine import _lp_kernels as K

ZERO = 1e-9


def _edge_slopes_plain(G, r, ybasic, in_block, tight, n_real, cost, ucost, zero_tol, Binv,
                       rownorm, rounding_rtol):
    """Edge slopes one column at a time, every row's class decided at each term."""
    m, T = G.shape
    reduced, slope, noise = np.empty(2 * m), np.empty(2 * m), np.empty(2 * m)
    ybasic = ybasic.copy()
    charged = 0.0
    for t in range(T):
        if r[t] > zero_tol:
            ybasic[t] = True
        elif r[t] < -zero_tol:
            ybasic[t] = False
        if not in_block[t]:
            charged += (cost[t] + ucost[t]) * rownorm[t]
    for q in range(m):
        basic = pos = zplus = zminus = 0.0
        for t in range(T):
            if in_block[t]:
                continue
            gt = G[q, t]
            if ybasic[t]:
                basic += cost[t] * gt
            else:
                basic -= ucost[t] * gt
            if r[t] > zero_tol:
                pos += cost[t] * gt
            elif r[t] < -zero_tol:
                pos -= ucost[t] * gt
            elif gt > 0:
                zminus += cost[t] * gt
                zplus += ucost[t] * gt
            else:
                zplus -= cost[t] * gt
                zminus -= ucost[t] * gt
        own, uown = cost[tight[q]], ucost[tight[q]]
        column = 0.0
        for i in range(m):
            column += abs(Binv[i, q])
        noise[q] = noise[m + q] = rounding_rtol * column * charged
        if tight[q] >= n_real:
            reduced[q] = reduced[m + q] = slope[q] = slope[m + q] = np.inf
        else:
            reduced[q], reduced[m + q] = -basic + uown, basic + own
            slope[q], slope[m + q] = -pos + zplus + uown, pos + zminus + own
    return reduced, slope, noise, ybasic


def _case(rng, m, T, zeros):
    """Rates of mixed magnitudes (sums that round), slacks with many exact and
    near zeros (or, if not ``zeros``, none outside the block), some rows in the
    block, some costs zero, a pseudo-row in the block."""
    G = rng.normal(size=(m, T)) * 10.0 ** rng.integers(-8, 8, size=(m, T))
    G[rng.random((m, T)) < 0.1] = 0.0
    G[rng.random((m, T)) < 0.05] *= -0.0
    r = rng.normal(size=T) * 10.0 ** rng.integers(-12, 2, size=T)
    r[rng.random(T) < 0.2] = 0.0
    if not zeros:
        r = np.where(np.abs(r) > ZERO, r, rng.choice([-1.0, 1.0], T) * rng.uniform(2, 3, T) * ZERO)
    tight = rng.choice(T, m, replace=False)
    in_block = np.zeros(T, dtype=bool)
    in_block[tight] = True
    n_real = T - 1 if T - 1 in tight else T
    cost = rng.uniform(0, 2, T) * (rng.random(T) < 0.8)
    ucost = rng.uniform(0, 1, T) * (rng.random(T) < 0.5)
    return G, r, rng.random(T) < 0.5, in_block, tight, n_real, cost, ucost


@pytest.mark.parametrize("zeros", [True, False])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 9, 11, 14])
def test_edge_slopes_have_the_bits_of_one_column_at_a_time(m, zeros):
    rng = np.random.default_rng(m)
    for _ in range(5):
        T = int(rng.integers(m, 300))
        G, r, ybasic, in_block, tight, n_real, cost, ucost = _case(rng, m, T, zeros)
        assert zeros == bool(np.any(np.abs(r[~in_block]) <= ZERO))
        Binv, rownorm = rng.normal(size=(m, m)), rng.uniform(0.1, 3, T)
        want = _edge_slopes_plain(G, r, ybasic, in_block, tight, n_real, cost, ucost, ZERO, Binv,
                                  rownorm, 1e-12)
        got = np.empty(2 * m), np.empty(2 * m), np.empty(2 * m)
        K.edge_slopes(G, r, ybasic, in_block, tight, n_real, cost, ucost, ZERO, Binv, rownorm,
                      1e-12, *got)
        for a, b in zip(got + (ybasic,), want):
            assert a.tobytes() == b.tobytes()


def _leaving_row_sorted(g, sigma, r, in_block, slope, tol, floor, rownorm, scale, charge,
                        zero_tol):
    """Descent's leaving row with all crossings sorted (stable: ties by row)."""
    idx, ratio = [], []
    for t in range(len(g)):
        sg = sigma * g[t]
        if (not in_block[t] and abs(sg) > max(floor, scale * rownorm[t]) and r[t] * sg > 0
                and abs(r[t]) > zero_tol):
            idx.append(t)
            ratio.append(r[t] / sg)
    climb = slope
    for o in np.argsort(np.array(ratio), kind="mergesort"):
        t = idx[o]
        climb += charge[t] * abs(g[t])
        if climb >= -tol:
            return t
    return -1


@pytest.mark.parametrize("seed", range(6))
def test_leaving_row_takes_the_crossings_in_sorted_order(seed):
    """Ties of ratio (slacks and rates on a coarse grid) go to the lower row, and the
    climb stops at the first crossing, the last, or none."""
    rng = np.random.default_rng(seed)
    T = int(rng.integers(5, 400))
    g = rng.integers(-3, 4, T) * 0.5
    r = rng.integers(-4, 5, T) * 0.25
    r[rng.random(T) < 0.1] = 1e-12
    in_block = rng.random(T) < 0.05
    charge = rng.uniform(0, 1, T) * (rng.random(T) < 0.9)
    rownorm = rng.uniform(0.5, 2, T)
    total = charge @ np.abs(g)
    for sigma in (1.0, -1.0):
        for slope in (-1e-3, -0.3 * total, -0.7 * total, -1.5 * total - 1):
            for floor, scale in ((0.0, 0.0), (0.6, 0.0), (0.0, 0.5)):
                args = (g, sigma, r, in_block, slope, 1e-12, floor, rownorm, scale, charge, ZERO)
                got = K.leaving_row(g, sigma, r, np.zeros(T, dtype=bool), in_block, slope, 1e-12,
                                    floor, rownorm, scale, charge, ZERO, True)
                assert got == _leaving_row_sorted(*args)
