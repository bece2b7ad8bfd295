"""The documentation builds with warnings as errors: the API pages from the numpydoc
docstrings, the user guide and the gallery, whose examples run and draw their figures.
Built from a copy of docs/ and examples/ in a temporary folder (sphinx-gallery writes
next to its sources)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "matplotlib"):
    pytest.importorskip(module)


def test_docs_build_without_warnings(tmp_path):
    for folder in ("docs", "examples"):
        shutil.copytree(REPO / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("_build", "auto_examples", "__pycache__"))
    out = tmp_path / "html"
    env = dict(os.environ, GTO_SOURCE=str(REPO), MPLBACKEND="Agg",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(tmp_path / "docs"), str(out)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    api = (out / "api.html").read_text(encoding="utf-8")
    for name in ("GTOClassifier", "one_group", "optimize", "export_text", "solve_odt",
                 "UnseenCategoryWarning"):
        assert name in api, name
    assert "(default: product)" in (out / "command_line.html").read_text(encoding="utf-8")
    examples = sorted(p.stem for p in (REPO / "examples").glob("plot_*.py"))
    assert len(examples) >= 3
    for stem in examples:  # each example ran and its figure was kept
        assert (out / "_images" / f"sphx_glr_{stem}_001.png").stat().st_size > 5000, stem
        assert (out / "auto_examples" / f"{stem}.html").exists()
