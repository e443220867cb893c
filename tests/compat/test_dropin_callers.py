"""The pytrec_eval drop-in inside the calling patterns of its real users.

Each caller below is re-created from its documented behaviour (what it computes from
pytrec_eval's output), not from its code, and run twice on the same inputs: once with
pytrec_eval's ``RelevanceEvaluator``, once with irmetrics'. Everything a caller returns
must be identical, values and key order: BEIR's averages over ``scores``, MTEB's
per-query values paired with its own query order (its nAUC scores), and the TREC-DL
evaluation of sentence-transformers' examples. The fixtures have ties, graded labels,
queries judged by an empty dict, empty rankings, run queries without judgments and
judged queries without rankings, and documents whose id is the query's.
"""

import math

import numpy as np
import pytest

from irmetrics.compat import pytrec_eval as compat

pytrec_eval = pytest.importorskip("pytrec_eval")

EVALUATORS = {"pytrec_eval": pytrec_eval.RelevanceEvaluator,
              "irmetrics": compat.RelevanceEvaluator}


def fixture(seed: int):
    """``(qrels, run)`` as retrieval libraries hand them to pytrec_eval."""
    rng = np.random.default_rng(seed)
    corpus = [f"doc{i}" for i in range(120)] + [f"q{i}" for i in range(40)]
    qrels, run = {}, {}
    for i in rng.permutation(40):
        qid = f"q{i}"
        if i % 13 != 5:  # a few queries have no ranking
            picked = rng.choice(len(corpus), int(rng.integers(1, 60)), replace=False)
            scores = rng.normal(size=picked.size)
            if i % 3 == 0:  # rounded scores: many ties
                scores = np.round(scores, 1)
            if i % 4 == 0:  # float32 scores (a model's), ties below float32 too
                scores = scores.astype(np.float32)
            run[qid] = {corpus[j]: float(s) for j, s in zip(picked, scores)}
            if i % 5 == 0:
                run[qid][qid] = 9.0  # the query itself, retrieved first
        if i % 11 != 7:  # a few queries are not judged
            judged = rng.choice(len(corpus), int(rng.integers(1, 25)), replace=False)
            qrels[qid] = {corpus[j]: int(rng.integers(0, 4)) for j in judged}
        if i % 17 == 3:
            qrels[qid] = {}  # judged by an empty dict (pytrec_eval drops the query)
    run["unjudged"] = {"doc1": 1.0}
    first = next(q for q in run if run[q] and qrels.get(q))
    run = {first: run.pop(first), **run}  # pytrec_eval needs a first ranking that counts
    run[next(q for q in run if q != first and q in qrels)] = {}  # an empty ranking
    return qrels, run


SEEDS = range(6)


# --------------------------------------------------------------------------------------
# BEIR: EvaluateRetrieval.evaluate(qrels, results, k_values, ignore_identical_ids=True)
# --------------------------------------------------------------------------------------

def beir_evaluate(Evaluator, qrels, results, k_values, ignore_identical_ids=True):
    """BEIR's documented evaluation: NDCG@k, MAP@k, Recall@k and P@k averaged over the
    evaluated queries, rounded to 5 digits; documents whose id is the query's are
    dropped from the results first when ``ignore_identical_ids``."""
    if ignore_identical_ids:
        results = {qid: {doc: s for doc, s in docs.items() if doc != qid}
                   for qid, docs in results.items()}
    ks = ",".join(map(str, k_values))
    evaluator = Evaluator(qrels, {f"map_cut.{ks}", f"ndcg_cut.{ks}", f"recall.{ks}",
                                  f"P.{ks}"})
    scores = evaluator.evaluate(results)
    out = {}
    for label, name in (("NDCG", "ndcg_cut"), ("MAP", "map_cut"), ("Recall", "recall"),
                        ("P", "P")):
        sums = {f"{label}@{k}": 0.0 for k in k_values}
        for qid in scores:
            for k in k_values:
                sums[f"{label}@{k}"] += scores[qid][f"{name}_{k}"]
        out[label] = {key: round(value / len(scores), 5) for key, value in sums.items()}
    return out, scores


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("ignore_identical_ids", [True, False])
def test_beir(seed, ignore_identical_ids):
    qrels, run = fixture(seed)
    theirs = beir_evaluate(EVALUATORS["pytrec_eval"], qrels, run, [1, 3, 5, 10, 100, 1000],
                           ignore_identical_ids)
    ours = beir_evaluate(EVALUATORS["irmetrics"], qrels, run, [1, 3, 5, 10, 100, 1000],
                         ignore_identical_ids)
    assert_identical(ours, theirs)


# --------------------------------------------------------------------------------------
# MTEB: per-query scores in its own order, nAUC over per-query confidence
# --------------------------------------------------------------------------------------

def abstention_auc(metric: np.ndarray, confidence: np.ndarray) -> float:
    """Area under the curve of the mean metric kept when abstaining on the least
    confident queries (0%, 10%, ..., 90% abstained), as MTEB's nAUC describes it."""
    order = np.argsort(confidence, kind="stable")[::-1]
    kept = [metric[order[:max(1, math.ceil(len(metric) * (1 - rate)))]].mean()
            for rate in np.linspace(0, 0.9, 10)]
    return float(np.trapezoid(kept, dx=0.1))


def mteb_evaluate(Evaluator, qrels, results):
    """MTEB's documented retrieval scores: per-query nDCG@10, MAP@10, Recall@10 and P@10
    listed in the order pytrec_eval returns the queries, paired with confidence scores
    (max, std, top-1 minus top-2 of each query's scores) listed in the run's order for
    the queries pytrec_eval evaluated; nAUC normalises the abstention AUC by that of an
    oracle (confidence = the metric itself) and of random abstention."""
    evaluator = Evaluator(qrels, {"ndcg_cut.10", "map_cut.10", "recall.10", "P.10"})
    scores = evaluator.evaluate(results)
    evaluated = [qid for qid in results if qid in scores]
    confidence = {}
    for qid in evaluated:
        values = np.sort(np.fromiter(results[qid].values(), float))[::-1]
        top2 = values[1] if len(values) > 1 else 0.0
        confidence[qid] = (values[0] if len(values) else 0.0,
                           values.std() if len(values) else 0.0,
                           (values[0] - top2) if len(values) else 0.0)
    naucs = {}
    for name in ("ndcg_cut_10", "map_cut_10", "recall_10", "P_10"):
        metric = np.array([per_query[name] for per_query in scores.values()])
        for j, kind in enumerate(("max", "std", "diff1")):
            conf = np.array([confidence[qid][j] for qid in evaluated])
            auc = abstention_auc(metric, conf)
            oracle = abstention_auc(metric, metric)
            rand = float(metric.mean())
            naucs[f"nAUC_{name}_{kind}"] = (auc - rand) / (oracle - rand) \
                if oracle != rand else 0.0
    return scores, naucs


@pytest.mark.parametrize("seed", SEEDS)
def test_mteb(seed):
    qrels, run = fixture(seed)
    theirs = mteb_evaluate(EVALUATORS["pytrec_eval"], qrels, run)
    ours = mteb_evaluate(EVALUATORS["irmetrics"], qrels, run)
    assert_identical(ours, theirs)


def test_mteb_naucs_change_when_the_order_is_wrong():
    # The order matters: pairing the values in sorted-id order gives other nAUCs.
    qrels, run = fixture(0)
    scores, naucs = mteb_evaluate(EVALUATORS["pytrec_eval"], qrels, run)
    shuffled = dict(sorted(scores.items()))
    assert list(shuffled) != list(scores)

    class SortedOrder:
        def __init__(self, *args):
            self.inner = pytrec_eval.RelevanceEvaluator(*args)

        def evaluate(self, results):
            return dict(sorted(self.inner.evaluate(results).items()))

    assert mteb_evaluate(SortedOrder, qrels, run)[1] != naucs


# --------------------------------------------------------------------------------------
# sentence-transformers: TREC-DL evaluation of a re-ranker (graded qrels, nDCG@10)
# --------------------------------------------------------------------------------------

def trec_dl_evaluate(Evaluator, qrels, results):
    """The TREC-DL evaluation of sentence-transformers' examples: graded judgments, run
    scores from a model, mean nDCG@10 (and MRR@10 counting labels >= 2 as relevant)
    over the queries pytrec_eval returns."""
    ndcg = Evaluator(qrels, {"ndcg_cut.10"}).evaluate(results)
    top10 = {qid: dict(sorted(docs.items(), key=lambda item: -item[1])[:10])
             for qid, docs in results.items()}
    mrr = Evaluator(qrels, {"recip_rank"}, relevance_level=2).evaluate(top10)
    return (float(np.mean([v["ndcg_cut_10"] for v in ndcg.values()])),
            float(np.mean([v["recip_rank"] for v in mrr.values()])), ndcg, mrr)


@pytest.mark.parametrize("seed", SEEDS)
def test_sentence_transformers_trec_dl(seed):
    qrels, run = fixture(seed)
    theirs = trec_dl_evaluate(EVALUATORS["pytrec_eval"], qrels, run)
    ours = trec_dl_evaluate(EVALUATORS["irmetrics"], qrels, run)
    assert_identical(ours, theirs)


# --------------------------------------------------------------------------------------


def assert_identical(ours, theirs):
    """Equal values (bit for bit; NaN equals NaN) and equal key order, recursively."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and list(ours) == list(theirs)
        for key in theirs:
            assert_identical(ours[key], theirs[key])
    elif isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_identical(a, b)
    elif isinstance(theirs, float) and math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert ours == theirs and type(ours) is type(theirs), (ours, theirs)
