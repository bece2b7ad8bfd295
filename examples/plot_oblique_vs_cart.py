"""
Oblique tree against CART on a planted oblique tree
===================================================

Two features, labels from an oblique depth-2 tree with 5 % label noise.  CART of
the same depth can only cut parallel to the axes; the tabu search
(:func:`gto.optimize`, started from CART's own tree) turns its cuts and never ends
with more training errors than its start.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.tree import DecisionTreeClassifier

import gto
from gto import plots

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, size=(300, 2))
left = X[:, 0] + X[:, 1] <= 0.2
y = np.where(left, X[:, 0] - X[:, 1] > 0.3, X[:, 1] - 0.5 * X[:, 0] > 0.4).astype(int)
y[rng.random(len(y)) < 0.05] ^= 1  # label noise

cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
res = gto.optimize(cart, X, y, max_iter=2000, random_state=0)
print(f"training errors: CART {res.start_n_errors}, GTO {res.n_errors}")
print(res.tree.to_text(["x", "y"]))

# %%
# The class regions of both trees, with the training points on top (every gto
# plot takes ``ax=``; here pyplot's Axes, so that the figure shows in a notebook).
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained")
plots.compare_regions([cart, res.tree], X, y, ax=axes, titles=["CART depth 2", "GTO from CART"],
                      feature_names=["x", "y"])
