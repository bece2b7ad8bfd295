"""
Reading and drawing a fitted tree
=================================

A :class:`gto.GTOClassifier` on the heart data with named columns: one search of a
tree with at most two features per decision (``alpha=0`` and ``max_features=2``, no
internal cross-validation), so that each decision reads at a glance; then the tree
as text, the importance of each column and the drawing.
"""
import matplotlib.pyplot as plt
import pandas as pd

import gto
import problems

X, y = problems.load("heart")
frame = pd.DataFrame(X, columns=problems.feature_names("heart"))
clf = gto.GTOClassifier(depth=2, alpha=0, max_features=2, max_iter=1000,
                        random_state=0).fit(frame, y)
print(f"training accuracy {clf.score(frame, y):.3f}")
print(gto.export_text(clf))

# %%
# One importance per input column.
importance = pd.Series(clf.feature_importances_, index=clf.feature_names_in_)
print(importance[importance > 0].sort_values(ascending=False))

# %%
# The drawing: a box per decision (yes goes left), a rounded box per leaf.
fig, ax = plt.subplots(figsize=(11, 5))
gto.plot_tree(clf, ax=ax)
