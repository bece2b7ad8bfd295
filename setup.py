"""Packaging for gto: the metadata is in pyproject.toml; this file lets older tools
(``python setup.py ...``, editable installs with old pip) build it."""
from setuptools import setup

setup()
