"""Statistics on aligned per-query scores: paired tests, CIs, effect sizes, corrections.

This package knows nothing about retrieval. Arrays go in, numbers come out:

* :func:`paired_test` - paired t, randomization (sign flip), bootstrap, Wilcoxon and sign
  tests of ``a - b``, with a confidence interval of the mean difference, Cohen's
  :math:`d_z` and win/tie/loss counts (and :func:`smallest_p_value`, the floor of any
  distribution-free paired test on m differing pairs);
* :func:`adjust_pvalues` - family-wise and false-discovery-rate corrections;
* :func:`tukey_hsd` - randomised Tukey HSD over ``m`` systems blocked on topics;
* :func:`confidence_interval` - the mean of one system with a t or BCa interval;
* :mod:`~irmetrics.stats.agreement` - agreement between rankings of systems (Kendall's
  tau-b, tau_AP, Spearman, Pearson, swapped pairs, top-k overlap, with bootstrap intervals
  over topics: :func:`ranking_agreement`) and between judges (Cohen's kappa,
  Krippendorff's alpha, Jaccard, confusion matrices);
* :mod:`~irmetrics.stats.stability` - discriminative power and swap rate of a
  leaderboard (Sakai; Voorhees & Buckley);
* :mod:`~irmetrics.stats.similarity` - how alike two rankings of items are, per query:
  rank-biased overlap with ties (:func:`rbo`; Corsi & Urbano), tau-b and tau_AP on the
  shared items, Jaccard, overlap and recall at k;
* :mod:`~irmetrics.stats.rank_intervals` - simultaneous intervals of the rank of every
  system on one collection or aggregated over many, the systems tied with the best;
* :mod:`~irmetrics.stats.topic_set_size` - how many topics a test collection needs
  (Sakai's topic set size design).

Every function is vectorised over a trailing "columns" axis (measures, or system pairs
stacked by the caller): input of shape ``(n,)`` gives scalar (0-d array) fields, input of
shape ``(n, k)`` gives fields of shape ``(k,)``; the columns are independent tests that
share the random resamples.

Randomness is drawn in blocks whose size depends only on the data shape and the number of
resamples, block ``i`` from generator ``i`` of :func:`irmetrics.parallel.block_generators`
(``numpy.random.SeedSequence(seed).spawn``); the blocks run on ``threads`` threads and are
joined in block order, so the same inputs and seed give bit-identical results for any
thread count and any machine set-up. Resampled statistics are compared with the
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
from .agreement import (ALPHA_LEVELS, KAPPA_WEIGHTS, RANKING_STATISTICS, RankingAgreement,
                        alpha_from_confusion, cohen_kappa, confusion_matrix, jaccard,
                        kappa_from_confusion, kendall_tau_b, krippendorff_alpha, pearson_r,
                        ranking_agreement, spearman_rho, swapped_pairs, tau_ap, top_k_overlap)
from .stability import (POWER_TESTS, DiscriminativePower, SwapRate, discriminative_power,
                        swap_rate, system_pairs)
from .similarity import RBO_TIES, RBOResult, rbo
from .rank_intervals import AGGREGATIONS, RESAMPLING_LEVELS, RankIntervals, aggregate_rank_intervals
from .topic_set_size import DESIGNS, TopicSetSize, anova_power, pilot_variance, t_test_power, topic_set_sizes
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
    "RANKING_STATISTICS",
    "KAPPA_WEIGHTS",
    "ALPHA_LEVELS",
    "POWER_TESTS",
    "RankingAgreement",
    "DiscriminativePower",
    "SwapRate",
    "kendall_tau_b",
    "tau_ap",
    "spearman_rho",
    "pearson_r",
    "swapped_pairs",
    "top_k_overlap",
    "ranking_agreement",
    "confusion_matrix",
    "cohen_kappa",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "alpha_from_confusion",
    "jaccard",
    "discriminative_power",
    "swap_rate",
    "system_pairs",
    "RBO_TIES",
    "RBOResult",
    "rbo",
    "AGGREGATIONS",
    "RESAMPLING_LEVELS",
    "RankIntervals",
    "aggregate_rank_intervals",
    "DESIGNS",
    "TopicSetSize",
    "pilot_variance",
    "t_test_power",
    "anova_power",
    "topic_set_sizes",
]
