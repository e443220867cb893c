"""Statistics on aligned per-query scores: paired tests, CIs, effect sizes, corrections.

This package knows nothing about retrieval. Arrays go in, numbers come out:

* :func:`paired_test` - paired t, randomization (sign flip), bootstrap, Wilcoxon and sign
  tests of ``a - b``, with a confidence interval of the mean difference, Cohen's
  :math:`d_z` and win/tie/loss counts (and :func:`smallest_p_value`, the floor of any
  distribution-free paired test on m differing pairs);
* :func:`adjust_pvalues` - family-wise and false-discovery-rate corrections;
* :func:`tukey_hsd` - randomised Tukey HSD over ``m`` systems blocked on topics;
* :func:`confidence_interval` - the mean of one system with a t or BCa interval.

Every function is vectorised over a trailing "columns" axis (measures, or system pairs
stacked by the caller): input of shape ``(n,)`` gives scalar (0-d array) fields, input of
shape ``(n, k)`` gives fields of shape ``(k,)``; the columns are independent tests that
share the random resamples.

Randomness comes from ``numpy.random.default_rng(seed)`` and is drawn in blocks whose size
depends only on the data shape, never on the thread count, so the same inputs and seed give
bit-identical results on any machine set-up. Resampled statistics are compared with the
observed one with a tolerance of ``100 * eps`` (scipy.stats.permutation_test's factor)
times the scale at which their sums round: ``sum |d_i|`` for sign flips, the observed t for
the studentised bootstrap, the difference plus the mean absolute score for Tukey HSD. So
rounding (in BLAS sums, or of a sum that nearly cancels) cannot decide a tie. Bootstrap
means, which feed the intervals directly, are exact sums of fixed-point parts.

The package itself needs only numpy and scipy (scipy is imported lazily).
"""

from .corrections import adjust_pvalues
from .intervals import confidence_interval
from .paired import paired_test, smallest_p_value
from .tukey import tukey_hsd
from ._common import (ALTERNATIVES, BOOTSTRAP_CIS, CI_METHODS, CORRECTIONS, TESTS, ConfidenceInterval,
                      PairedTest, TukeyHSD, UnreliableTestWarning)

__all__ = [
    "TESTS",
    "CORRECTIONS",
    "ALTERNATIVES",
    "BOOTSTRAP_CIS",
    "CI_METHODS",
    "PairedTest",
    "TukeyHSD",
    "ConfidenceInterval",
    "UnreliableTestWarning",
    "paired_test",
    "smallest_p_value",
    "adjust_pvalues",
    "tukey_hsd",
    "confidence_interval",
]
