"""The release surface: the version, the distribution's name and files, type information."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import irmetrics
from irmetrics.cli import main

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


def pyproject_version() -> str:
    return re.search(r'(?m)^version\s*=\s*"([^"]+)"', PYPROJECT.read_text()).group(1)


@pytest.mark.skipif(not PYPROJECT.exists(), reason="needs the source tree's pyproject.toml")
def test_version_is_the_one_pyproject_declares():
    assert irmetrics.__version__ == pyproject_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", irmetrics.__version__)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_pyproject_names_the_distribution_and_the_extras():
    import tomllib

    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert project["name"] == irmetrics.DISTRIBUTION == "irmetrics-exact"
    assert project["version"] == pyproject_version()
    assert {"test", "plot", "spark", "dev", "docs"} <= set(project["optional-dependencies"])
    assert any(d.startswith("tqdm") for d in project["dependencies"])


def test_version_on_the_command_line(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"irmetrics {irmetrics.__version__} ")


def test_changelog_starts_with_this_release():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "Keep a Changelog" in changelog and "Semantic Versioning" in changelog
    released = re.findall(r"(?m)^## \[(\d+\.\d+\.\d+)\]", changelog)
    assert released and released[0] == pyproject_version()


def test_the_package_is_typed():
    assert (Path(irmetrics.__file__).parent / "py.typed").is_file()


def _package_files(package_dir: Path) -> set[str]:
    """Every file the wheel must hold: the package's sources and data (no caches)."""
    return {p.relative_to(package_dir.parent).as_posix() for p in package_dir.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def test_wheel_holds_every_package_file():
    """With IRMETRICS_WHEEL=<path of a wheel> (CI's wheel step), the wheel holds every file
    of the package in the source tree (IRMETRICS_SOURCE, default ../irmetrics), py.typed
    included, and its metadata names the distribution and the version."""
    wheel = os.environ.get("IRMETRICS_WHEEL")
    if not wheel:
        pytest.skip("set IRMETRICS_WHEEL to a built wheel (.ci/run does)")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode()
    # the source package: IRMETRICS_SOURCE when the tests run from a copy without it
    source = Path(os.environ.get("IRMETRICS_SOURCE", ROOT / "irmetrics"))
    expected = _package_files(source)
    assert len(expected) > 50 and "irmetrics/__init__.py" in expected, source
    assert expected - names == set(), "files missing from the wheel"
    assert "irmetrics/py.typed" in names
    assert f"Name: {irmetrics.DISTRIBUTION}\n" in text
    assert f"Version: {pyproject_version()}\n" in text


def test_tests_run_against_the_installed_package():
    """With IRMETRICS_TEST_INSTALLED=1 (CI's wheel step), ``irmetrics`` is the copy
    installed in site-packages, not the source tree."""
    if not os.environ.get("IRMETRICS_TEST_INSTALLED"):
        pytest.skip("set IRMETRICS_TEST_INSTALLED=1 to check the tests import the wheel")
    location = Path(irmetrics.__file__).resolve()
    assert "site-packages" in location.parts, location
    assert ROOT not in location.parents
    # The console script of this interpreter's environment, not whatever `irmetrics` is
    # first on PATH (CI's wheel venv is not activated).
    script = shutil.which("irmetrics", path=str(Path(sys.executable).parent))
    assert script is not None, f"no irmetrics script beside {sys.executable}"
    done = subprocess.run([script, "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith(f"irmetrics {irmetrics.__version__}")
