"""docs/leaderboards.md: every Python block runs from the repository root, in order, and
prints what the page shows."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

ROOT = Path(__file__).parents[2]
PAGE = (ROOT / "docs" / "leaderboards.md").read_text()


def test_leaderboards_page_runs_and_prints_what_it_shows(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```(python|text)\n(.*?)```", PAGE, re.S)
    namespace: dict = {}
    checked = 0
    for i, (kind, code) in enumerate(blocks):
        if kind != "python":
            continue
        out = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore")
            exec(compile(code.replace("...", "None"), f"leaderboards.md block {i}", "exec"),
                 namespace)
        shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
        if shown is not None and out.getvalue():
            assert out.getvalue().split() == shown.split(), f"block {i}"
            checked += 1
    assert checked >= 5
