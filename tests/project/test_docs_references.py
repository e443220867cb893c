"""Every section the code and the tests cite (``docs/reference/<page>.md §N``) exists in
the repository, and no tracked file names a path that exists only on one machine."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CITE = re.compile(r"docs/reference/(\w+)\.md §(\d+(?:\.\d+)?)")


def tracked(*suffixes: str) -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out if f.endswith(suffixes) and (ROOT / f).is_file()]


def sections(page: str) -> set[str]:
    """Numbered headings (``### 8.3 ...``), and the numbered items of a section's list
    (``## 9. ...`` then ``3. **Math functions.**`` is §9.3)."""
    found: set[str] = set()
    current = None
    for line in (ROOT / "docs" / "reference" / f"{page}.md").read_text().splitlines():
        heading = re.match(r"#+ (\d+(?:\.\d+)?)[. ]", line)
        if heading:
            current = heading.group(1)
            found.add(current)
        elif current and "." not in current and (item := re.match(r"(\d+)\. \*\*", line)):
            found.add(f"{current}.{item.group(1)}")
    return found


def test_cited_sections_exist():
    cited = {}
    for path in tracked(".py", ".md"):
        for page, section in CITE.findall(path.read_text(errors="replace")):
            cited.setdefault((page, section), path.relative_to(ROOT))
    assert len(cited) >= 30
    missing = {k: str(v) for k, v in cited.items() if k[1] not in sections(k[0])}
    assert not missing


def test_every_section_mark_names_its_page():
    """A bare ``§N`` in code or tests would point nowhere a reader can follow."""
    bare = []
    for path in tracked(".py"):
        if path == Path(__file__).resolve():  # this file writes about the marks
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if "§" in line and "docs/reference/" not in line:
                bare.append(f"{path.relative_to(ROOT)}:{n}")
    assert not bare


def test_no_machine_paths():
    here = [str(p.relative_to(ROOT)) for p in tracked(".py", ".md", ".toml", ".txt")
            if re.search(r"/work/(shared|main|wt|venv)", p.read_text(errors="replace"))]
    assert not here
