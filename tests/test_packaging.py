"""A wheel (non-editable install) carries the data folders the code looks for."""
from __future__ import annotations

import subprocess
import sys
import zipfile

from edge import paths
from tests.helpers import REPO


def test_wheel_holds_board_configs_manifest_and_units(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(REPO),
                    "-w", str(tmp_path)], check=True, capture_output=True, timeout=300)
    (whl,) = tmp_path.glob("edge-*.whl")
    names = zipfile.ZipFile(whl).namelist()
    data = "edge-0.1.0.data/data/share/edge/"
    for rel in ("board-configs/x86-dev.yaml", "board-configs/rk3588-rock5b.yaml", "models/manifest.yaml",
                "systemd/edge.service"):
        assert data + rel in names, rel
    assert "edge/defaults.yaml" in names and "drivers/audio/convert.py" in names


def test_data_dir_falls_back_to_the_install_prefix(monkeypatch, tmp_path):
    assert paths.data_dir("board-configs") == REPO / "board-configs"
    monkeypatch.setattr(paths, "CHECKOUT", tmp_path)  # as if the package were installed from a wheel
    assert paths.data_dir("models") == paths.Path(sys.prefix) / "share" / "edge" / "models"
