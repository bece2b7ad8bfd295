"""Sphinx configuration: API pages from the numpydoc docstrings, the user guide
(``*.rst`` here) and a sphinx-gallery of the runnable scripts in ``examples/``.

    python -m pip install ".[docs]"
    python -m sphinx -W -b html docs docs/_build/html
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("GTO_SOURCE", os.path.dirname(HERE)))  # the repository

import gto  # noqa: E402  (after the path is set)

project = "gto"
author = "the gto developers"
copyright = "the gto developers, MIT licence"
release = version = gto.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "**.md"]
suppress_warnings = ["config.cache"]  # sphinx-gallery's callables in the config

html_theme = "pydata_sphinx_theme"
html_title = f"gto {release}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}

autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

sphinx_gallery_conf = {
    "examples_dirs": os.path.join(os.path.dirname(HERE), "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",       # run every plot_*.py and keep its figures
    "ignore_pattern": r"quickstart\.py",  # a command-line script (tests/test_examples.py)
    "download_all_examples": False,
    "reset_modules": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
}


def _help_directive():
    """``.. gto-help:: COMMAND``: the command's ``--help`` text as a literal block, so the
    page always shows the options and defaults of the code it documents."""
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    from gto.cli._main import build_parser

    class GtoHelp(SphinxDirective):
        required_arguments = 1

        def run(self):
            command = self.arguments[0]
            parser = build_parser()._subparsers._group_actions[0].choices[command]
            os.environ["COLUMNS"] = "88"
            text = parser.format_help()
            title = nodes.rubric(text=f"gto {command}")
            return [title, nodes.literal_block(text, text)]

    return GtoHelp


def setup(app):
    app.add_directive("gto-help", _help_directive())
