"""The examples run and write what they promise (to a temporary folder)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from matplotlib.image import imread  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_quickstart_writes_its_pictures(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("quickstart", EXAMPLES / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(tmp_path), "--max-iter", "100"]) == tmp_path
    out = capsys.readouterr().out
    assert "cell_size_uniformity" in out and "x0" not in out  # DataFrame names, not x0
    assert "same training predictions: True" in out
    for name in ("tree.png", "regions.png"):
        image = imread(tmp_path / name)
        assert image.shape[0] > 200 and np.ptp(image[..., :3]) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["regions.png", "tree.png"]
