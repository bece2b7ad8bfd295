"""Packaging for gto: global tree optimization (Bennett & Blue, 1996)."""
from setuptools import setup

setup(
    name="gto",
    version="0.1.0",
    description=(
        "Global tree optimization: fixed-structure oblique decision trees "
        "by extreme point tabu search, Frank-Wolfe and exact MIP"
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.10",
    # gto, and the public tabu and problems beside it (DESIGN §9; gto refuses to run on a
    # shadowing tabu, gto/utils/_siblings.py); the experiment scripts go inside gto, as
    # gto._experiments, not as a top-level "experiments" that would collide with users' folders
    packages=["gto", "gto.utils", "gto.model", "gto.engine", "gto.learners", "gto.mip", "gto.slim",
              "gto.cli", "tabu", "problems", "gto._experiments"],
    package_dir={"gto._experiments": "experiments"},
    package_data={
        "problems": [
            "data/*.csv", "data/README.md", "data/numeric/*.csv", "data/categorical/*.csv",
            "data/paper/*.csv", "data/paper/README.md",
        ]
    },
    include_package_data=True,
    install_requires=[
        "numpy>=1.23",
        "numba>=0.59",
        "scipy>=1.10",
        "cvxpy>=1.4",
        "highspy>=1.7",
        "joblib>=1.2",
        "scikit-learn>=1.3",
        "threadpoolctl>=3.1",  # one BLAS thread in GTOClassifier.fit
        "pandas>=1.5",
        "tqdm>=4.60",
        "python-sat>=1.8.dev1",  # PyPI has only development releases
    ],
    extras_require={
        "test": ["pytest>=7", "hypothesis>=6", "dask[distributed]>=2023.1", "matplotlib>=3.6"],
        "plots": ["matplotlib>=3.6"],
        "dask": ["dask[distributed]>=2023.1"],
    },
    entry_points={"console_scripts": ["gto=gto.cli:main"]},
)
