"""
Categorical columns and subset tests
====================================

A DataFrame with a string column: ``one_group=True`` gives one feature per
decision, a subset test on the categories (``colour in {red}``) or a threshold on a
number.  Columns are matched by name when predicting, and a category never seen in
training warns (:class:`gto.model._categorical.UnseenCategoryWarning`).
"""
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import gto

rng = np.random.default_rng(0)
pets = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 200),
                     "weight": rng.normal(5, 2, 200).round(1)})
label = np.where((pets["colour"] == "red") | (pets["weight"] > 7), "keep", "drop")
clf = gto.GTOClassifier(depth=2, one_group=True, random_state=0).fit(pets, label)
print(gto.export_text(clf))
print(pd.Series(clf.feature_importances_, index=clf.feature_names_in_))

# %%
# New data: the columns in another order, and a colour the tree has not seen.
new = pd.DataFrame({"weight": [3.0, 8.5, 4.0], "colour": ["red", "blue", "purple"]})
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(clf.predict(new))
print(caught[0].message)

# %%
fig, ax = plt.subplots(figsize=(8, 4.5))
gto.plot_tree(clf, ax=ax)
