"""Sphinx configuration of the irmetrics documentation site.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (needs
``pip install ".[docs]"``); CI builds it with warnings as errors. The Markdown pages are
read by myst-parser, the API reference comes from the numpydoc docstrings, and one page per
measure family is rendered from the registry at build time (docs/families/, not committed).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the source tree, when it is not installed

import irmetrics  # noqa: E402
from irmetrics.measures.docs import write_family_pages  # noqa: E402

project = "irmetrics"
author = "irmetrics contributors"
copyright = "irmetrics contributors"
release = irmetrics.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
suppress_warnings = ["myst.header"]  # pages keep their own heading levels (GitHub renders them)

# Markdown: anchors for `page.md#a-heading` links, $math$, and ``` fences as code.
myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath", "colon_fence"]

# API reference: members in source order, signatures without the module path.
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say it, in words
add_module_names = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Optional dependencies are not needed to build the reference.
autodoc_mock_imports = ["torch", "torchmetrics", "pyspark", "faiss"]

html_theme = "furo"
html_title = f"irmetrics {release}"
html_static_path: list[str] = []


def _families(app) -> None:
    write_family_pages(Path(app.srcdir) / "families")


def setup(app):
    app.connect("builder-inited", _families)
