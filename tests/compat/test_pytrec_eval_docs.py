"""docs/pytrec_eval.md: its examples print what the page says."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "pytrec_eval.md"


def test_the_page_examples_hold():
    result = doctest.testfile(str(DOC), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0
