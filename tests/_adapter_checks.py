"""Checks every adapter test applies to an adapter's (Qrels, Run) pair.

1. The numeric road (adapter pair packed without strings) builds exactly the
   RankedLists that encode_qrels + pack build from the pair's string tables.
2. Evaluating the pair gives exactly what evaluating its TREC files gives
   (written by ``Qrels.write``/``Run.write``, read back by ``read_qrels``/``read_run``).
3. Under semantics="pytrec_eval" the numbers equal pytrec_eval on ``to_dict()``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import pytrec_eval

import irmetrics as irm
from irmetrics.adapters import to_ranked
from irmetrics.engine.pack import encode_qrels, pack
from irmetrics.exceptions import MissingQueriesWarning, NoQueriesError
from irmetrics.io.trec import read_qrels, read_run

MEASURES = ["map", "P.5", "recall.10", "ndcg", "ndcg_cut.3", "recip_rank", "Rprec", "bpref"]
LIST_FIELDS = ("query_ids", "offsets", "code", "rel_hist", "bogus", "scores", "doc_ids")


def assert_direct_matches_string(qrels, run) -> None:
    for complete in (False, True):
        for max_docs in (None, 0, 2):
            for semantics in ("trec_eval", "pytrec_eval"):
                opts = dict(complete=complete, max_docs=max_docs, semantics=semantics)
                direct = to_ranked(qrels, run, keep_doc_ids=True, **opts)
                string = pack(encode_qrels(qrels.df), run.df, keep_doc_ids=True,
                              run_name=run.name, **opts)
                for field in LIST_FIELDS:
                    a, b = getattr(direct, field), getattr(string, field)
                    assert a.dtype == b.dtype or field in ("query_ids", "doc_ids"), (field, opts)
                    assert np.array_equal(a, b), (field, opts, a, b)
                assert direct.qrels_positive_total == string.qrels_positive_total


def write_trec(qrels, run, directory):
    """The containers' own TREC writers (``Qrels.write``/``Run.write``)."""
    qrels_path, run_path = directory / "qrels.txt", directory / "run.txt"
    qrels.write(qrels_path)
    run.write(run_path)
    return qrels_path, run_path


def read_trec(qrels_path, run_path):
    return read_qrels(qrels_path), read_run(run_path)


def assert_trec_roundtrip(qrels, run, directory, **opts) -> None:
    """Adapter pair and its TREC files evaluate to identical numbers.

    An empty table has no TREC file (readers refuse a file without data lines).
    """
    if qrels.df.height == 0 or run.df.height == 0:
        with pytest.raises(NoQueriesError):
            irm.evaluate(qrels, run, MEASURES)
        return
    files = read_trec(*write_trec(qrels, run, directory))
    for semantics in ("trec_eval", "pytrec_eval"):
        direct = evaluated_dict(qrels, run, semantics=semantics, **opts)
        via_files = evaluated_dict(*files, semantics=semantics, **opts)
        assert direct == via_files, semantics


def evaluated_dict(qrels, run, measures=MEASURES, **opts) -> dict:
    """``evaluate(...).to_dict()``, or ``{}`` (pytrec_eval's answer) when no query is shared."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            return irm.evaluate(qrels, run, measures, **opts).to_dict()
    except NoQueriesError:
        return {}


def has_all_negative_query(q_dict) -> bool:
    """trec_eval 9 (pytrec_eval) is undefined for a query whose judgments are all
    negative (docs/reference/trec_eval.md §10 rows 22-23: stale counts, hangs or SIGSEGV)."""
    return any(docs and max(docs.values()) < 0 for docs in q_dict.values())


def assert_pytrec_parity(qrels, run) -> None:
    q_dict, r_dict = qrels.to_dict(), run.to_dict()
    if has_all_negative_query(q_dict):
        return  # no defined reference value to compare with
    expected = pytrec_eval.RelevanceEvaluator(q_dict, set(MEASURES)).evaluate(r_dict)
    got = evaluated_dict(qrels, run, semantics="pytrec_eval")
    # pytrec_eval drops queries with an empty run dict; adapters never emit those.
    assert set(got) == set(expected), (sorted(got), sorted(expected))
    for qid, values in expected.items():
        for name, value in values.items():
            assert math.isclose(got[qid][name], value, rel_tol=0, abs_tol=1e-9), (qid, name)


def check_pair(qrels, run, directory) -> None:
    assert_direct_matches_string(qrels, run)
    assert_trec_roundtrip(qrels, run, directory)
    assert_pytrec_parity(qrels, run)
