"""The distribution: the wheel has the documented import layout and entry points; the core stays light."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Build from a copy of the sources: an in-tree build leaves a ragassay.egg-info in the checkout whose
    stale entry points would shadow the installed ones for anything run from the repository root."""
    import shutil

    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for folder in ("core", "plugins", "reference_rags"):
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(out.glob("ragassay-*.whl"))


def test_wheel_maps_folders_to_the_ragassay_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "ragassay/__init__.py",
        "ragassay/hookspecs.py",
        "ragassay/store/database.py",
        "ragassay/cli/main.py",
        "ragassay/cli/starter.toml",
        "ragassay/plugins/bm25.py",
        "ragassay/reference_rags/naive.py",
        "ragassay/py.typed",
        "ragassay/present/serve/label_app.py",
        "ragassay/engine/runner.py",
        "ragassay/config/analysis.py",
        "ragassay/rubrics/preference.toml",
        "ragassay/present/templates/label.html",
        "ragassay/present/static/labelling.js",
    ):
        assert expected in names, expected
    assert not any(n.startswith(("core/", "plugins/", "tests/", "reference_rags/")) for n in names)


def test_wheel_declares_shipped_plugins_as_entry_points(wheel):
    archive = zipfile.ZipFile(wheel)
    entry_points = archive.read(next(n for n in archive.namelist() if n.endswith("entry_points.txt"))).decode()
    assert "[ragassay]" in entry_points and "bm25 = ragassay.plugins.bm25" in entry_points
    assert "ragassay = ragassay.cli.main:main" in entry_points


def test_installed_wheel_imports_and_core_requires_no_torch(wheel, tmp_path):
    archive = zipfile.ZipFile(wheel)
    metadata = archive.read(next(n for n in archive.namelist() if n.endswith("METADATA"))).decode()
    core_requires = [
        line for line in metadata.splitlines() if line.startswith("Requires-Dist") and "extra ==" not in line
    ]
    assert core_requires and not any("torch" in line or "transformers" in line for line in core_requires)
    assert any("torch" in line and 'extra == "local"' in line for line in metadata.splitlines())
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = "import ragassay, ragassay.plugins.bm25, ragassay.reference_rags.naive; print(ragassay.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout
    assert out.strip().startswith(str(target))


def test_editable_install_gives_the_same_layout():
    import ragassay
    import ragassay.plugins
    import ragassay.reference_rags

    assert Path(ragassay.__file__).parent.name in ("core", "ragassay")
    assert Path(ragassay.plugins.__file__).parent.name in ("plugins",)
    assert Path(ragassay.reference_rags.__file__).parent.name == "reference_rags"
