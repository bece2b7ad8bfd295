"""The README's Python blocks run as written, in order, from a folder without the source
tree (the package found through PYTHONPATH, as after ``pip install``)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_is_a_short_guide():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    setup = re.search(r"^```bash\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE).group(1)
    assert setup.splitlines() == ['python -m pip install . && python -m experiments.table1',
                                  'python -m pip install ".[test]" && ruff check . && python -m pytest -q']
    assert len(python_blocks(text)) >= 5


def test_readme_python_blocks_run_as_written(tmp_path):
    pytest.importorskip("matplotlib")
    script = "\n".join(python_blocks(README.read_text(encoding="utf-8")))
    (tmp_path / "readme.py").write_text("import matplotlib\nmatplotlib.use('Agg')\n" + script)
    env = dict(os.environ, PYTHONPATH=str(REPO), MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "readme.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "training accuracy" in out and "thalach" in out or "oldpeak" in out
    assert "colour in {" in out and "CART" in out
    for name in ("tree.png", "regions.png", "heart.csv", "pets.csv"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert not (tmp_path / "gto").exists()  # ran against the package, not a source copy


def test_readme_and_user_guide_count_the_default_candidates():
    """The texts say how many grid points the default internal CV scores and which
    ``C`` its linear-SVM trees have: the estimator's own default grid."""
    from gto.learners._estimator import SVM_C_GRID, GTOClassifier

    grid = GTOClassifier()._grid(13)  # heart's 13 features, the tour's data
    count = ("one", "two", "three", "four", "five", "six", "seven", "eight")[len(grid) - 1]
    svm_cs = [g["svm_C"] for g in grid if g["alpha"] is None]
    assert svm_cs == list(SVM_C_GRID)
    for path in (README, REPO / "docs" / "user_guide.rst"):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert f"over {count} candidates" in text or f"scores {count} candidates" in text, path
        assert re.search(r"0\.1, 0\.3,? (and )?1\b", text), path
