"""Kept so that ``import irmetrics.plot`` keeps working: the plots of a comparison live in
:mod:`irmetrics.comparison.plot`, and this name is that module."""

import sys

from .comparison import plot

sys.modules[__name__] = plot
