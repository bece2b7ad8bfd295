"""Per-iteration overhead of the EPTS driver (tabu.search) itself, on a dummy walker.

The walker is a d-cube with a random value per vertex; its methods are O(1)
(``evaluate``, ``pivot``) or one small numpy expression (``candidates``) and
time themselves, so the driver's own cost is the total minus the walker's.
Run: ``python experiments/bench_epts.py [--dim D] [--iters N]``.
"""
import argparse
import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from tabu import Walker, search  # noqa: E402

clock = time.perf_counter


class CubeWalker(Walker):
    """Vertices: bit strings; variable 2i+b is basic iff bit i == b; values hashed from the state."""

    def __init__(self, d, seed=0):
        self.d, self.n_variables, self.state, self.spent = d, 2 * d, 0, 0.0
        self.weights = np.random.default_rng(seed).normal(size=d)
        self.noise = np.random.default_rng(seed + 1).normal(size=4096)
        self._bits = np.zeros(d, np.int64)
        self._value = self._f(0, self._bits)

    def _f(self, state, bits):
        return float(bits @ self.weights) + self.noise[state % 4096]

    @property
    def value(self):
        return self._value

    @property
    def x(self):
        return self._bits.astype(float)

    def basis(self):
        return 2 * np.arange(self.d) + self._bits

    def candidates(self):
        t = clock()
        i = np.arange(self.d)
        bits = self._bits
        flips = self.state ^ (1 << (i % 62))
        vals = self._value + (1 - 2 * bits) * self.weights + self.noise[flips % 4096] - self.noise[self.state % 4096]
        out = 2 * i + 1 - bits, 2 * i + bits, vals
        self.spent += clock() - t
        return out

    def evaluate(self, entering):
        t = clock()
        i, want = divmod(entering, 2)
        b = int(self._bits[i])
        if b == want:
            out = -1, float("nan")
        else:
            s = self.state ^ (1 << (i % 62))
            out = 2 * i + b, self._value + (1 - 2 * b) * float(self.weights[i]) + float(
                self.noise[s % 4096] - self.noise[self.state % 4096])
        self.spent += clock() - t
        return out

    def pivot(self, entering, leaving):
        t = clock()
        i = entering // 2
        b = int(self._bits[i])
        self._value += (1 - 2 * b) * float(self.weights[i]) + float(
            self.noise[(self.state ^ (1 << (i % 62))) % 4096] - self.noise[self.state % 4096])
        self.state ^= 1 << (i % 62)
        self._bits[i] = 1 - b
        self.spent += clock() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=200)
    ap.add_argument("--iters", type=int, default=10_000)
    args = ap.parse_args()
    w = CubeWalker(args.dim)
    t = clock()
    res = search(w, max_iter=args.iters, random_state=0)
    total = clock() - t
    print(json.dumps({
        "variables": w.n_variables, "iterations": res.nit, "remakes": res.n_remakes,
        "diversify_moves": int((res.history["mode"] == 1).sum()),
        "total_us_per_iter": round(1e6 * total / res.nit, 2),
        "walker_us_per_iter": round(1e6 * w.spent / res.nit, 2),
        "driver_us_per_iter": round(1e6 * (total - w.spent) / res.nit, 2),
    }, indent=1))


if __name__ == "__main__":
    main()
