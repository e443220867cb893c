"""One ordering rule, every road: the same inputs through the table road (``pack``), the
bounded-memory file road (``stream``), the dict road, the array adapters (numpy) and the
device road (torch tensors, on the CPU here), for every tie policy x semantics. Each
road must give the order of :func:`irmetrics.engine.ordering.rank_order`, the rule
written as one sort, so a road changed alone fails here (and the others still pass).

Inputs: flat ``(query index, score, label)`` rows, the shape every road accepts.
Queries are ``q<index>`` and documents ``d<ordinal in the query>`` (the adapters'
names), so the byte order of ids differs from their numeric order (``q10 < q2``,
``d10 < d2``). Scores tie often, tie only after float32 rounding (``1 + 2**-30``;
``1e-46`` underflows to 0; ``3.5e38`` and ``3.6e38`` overflow to inf), and include
``-0.0`` next to ``0.0``. Labels are graded; with ``distinct`` every document of a query
has its own label, so the relevance codes spell out the whole order.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irmetrics.adapters import from_flat
from irmetrics.engine.dicts import JudgmentTable, evaluate_dict_run
from irmetrics.engine.ordering import SEMANTICS, TIES, doc_id_tiebreak, ordering_scores, rank_order
from irmetrics.engine.pack import encode_qrels, pack
from irmetrics.engine.stream import evaluate_run_file

try:  # the device road needs torch (CI installs its CPU wheel); the others do not
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

QUERIES = (0, 1, 2, 10, 11)
SCORES = (0.0, -0.0, 1.0, 1.0 + 2**-30, 0.5, -2.0, 7.25, 1e-46, 3.5e38, 3.6e38)


@st.composite
def flat_rows(draw):
    """``(query index, score, label)`` rows in input order."""
    n = draw(st.integers(1, 40))
    queries = draw(st.lists(st.sampled_from(QUERIES), min_size=n, max_size=n))
    scores = draw(st.lists(st.sampled_from(SCORES), min_size=n, max_size=n))
    if draw(st.booleans()):  # distinct labels inside each query
        seen: dict = {}
        labels = []
        for q in queries:
            labels.append(seen.get(q, 0))
            seen[q] = labels[-1] + 1
        labels = draw(st.permutations(labels))
    else:
        labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return list(zip(queries, scores, labels))


def named(rows):
    """The rows with the adapters' names: ``(qid, docid, score, label)``."""
    ordinal: dict = {}
    out = []
    for q, s, label in rows:
        ordinal[q] = ordinal.get(q, -1) + 1
        out.append((f"q{q}", f"d{ordinal[q]}", s, label))
    return out


def reference(rows, semantics, ties):
    """``{qid: [label, ...]}`` in :func:`rank_order`'s order."""
    rows = named(rows)
    qid = np.array([r[0] for r in rows], dtype=object)
    doc = np.array([r[1] for r in rows], dtype=object)
    _, q_rank = np.unique(qid.astype(str), return_inverse=True)  # byte order (ASCII ids)
    _, d_rank = np.unique(doc.astype(str), return_inverse=True)
    tie_key = -d_rank if doc_id_tiebreak(ties) else None
    order = rank_order(q_rank, np.array([r[2] for r in rows]), tie_key, semantics=semantics)
    out: dict = {}
    for i in order:
        out.setdefault(rows[i][0], []).append(rows[i][3])
    return out


def per_query(lists) -> dict:
    codes = lists.code.tolist()
    return {q: codes[lists.offsets[i]:lists.offsets[i + 1]]
            for i, q in enumerate(lists.query_ids.tolist())}


def capture(into: dict):
    """An ``evaluate_lists`` that keeps each chunk's codes and computes nothing."""
    def evaluate_lists(lists):
        into.update(per_query(lists))
        return {}
    return evaluate_lists


def frames(rows):
    rows = named(rows)
    qrels = pl.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                          "relevance": [r[3] for r in rows]}, schema_overrides={
                              "relevance": pl.Int64})
    run = pl.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                        "score": [float(r[2]) for r in rows]})
    return qrels, run


def road_pack(rows, semantics, ties, tmp_path):
    qrels, run = frames(rows)
    return per_query(pack(encode_qrels(qrels), run, semantics=semantics, ties=ties))


def road_stream(rows, semantics, ties, tmp_path):
    qrels, _ = frames(rows)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, d, s, _ in named(rows)))
    out: dict = {}
    # The bounded-memory road orders ties by doc id or in input order; "expected" reads
    # trec_eval's order (its measures never look inside a tie).
    streamed = evaluate_run_file(encode_qrels(qrels), path, capture(out), semantics=semantics,
                                 ties="trec_eval" if ties == "expected" else ties)
    assert streamed is not None
    return out


def road_dicts(rows, semantics, ties, tmp_path):
    qrels_dict: dict = {}
    run_dict: dict = {}
    for q, d, s, label in named(rows):
        qrels_dict.setdefault(q, {})[d] = label
        run_dict.setdefault(q, {})[d] = float(s)
    out: dict = {}
    evaluate_dict_run(JudgmentTable.from_dict(qrels_dict), run_dict, capture(out),
                      semantics=semantics, ties="trec_eval" if ties == "expected" else ties)
    return out


def _flat(rows, backend, semantics, ties):
    q, s, label = (list(c) for c in zip(*rows))
    if backend == "torch":
        args = (torch.tensor(s, dtype=torch.float64), torch.tensor(label),
                torch.tensor(q))
    else:
        args = (np.array(s), np.array(label), np.array(q))
    qrels, run = from_flat(*args, backend=backend)
    return per_query(run.pack_direct(qrels, semantics=semantics, ties=ties))


def road_adapters(rows, semantics, ties, tmp_path):
    return _flat(rows, "numpy", semantics, ties)


def road_device(rows, semantics, ties, tmp_path):
    return _flat(rows, "torch", semantics, ties)


ROADS = {"pack": road_pack, "stream": road_stream, "dicts": road_dicts,
         "adapters": road_adapters, "device": road_device}
if torch is None:
    del ROADS["device"]


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("semantics", SEMANTICS)
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=flat_rows())
def test_every_road_orders_as_the_rule(rows, semantics, ties, tmp_path):
    want = reference(rows, semantics, ties)
    got = {name: road(rows, semantics, ties, tmp_path) for name, road in ROADS.items()}
    wrong = {name: order for name, order in got.items() if order != want}
    assert not wrong, f"roads off the rule: {sorted(wrong)}; want {want}, got {wrong}"


def test_the_rule_distinguishes_every_option():
    """The inputs above can tell the options apart: a road that ignored semantics or the
    tie policy, or broke ties the other way, would be caught."""
    rows = [(2, 1.0, 0), (2, 1.0 + 2**-30, 1), (2, 1.0, 2), (10, -0.0, 0), (10, 1e-46, 1),
            (10, 0.0, 2)] + [(2, 0.5, 3 + i) for i in range(10)]
    orders = {(s, t): reference(rows, s, t) for s in SEMANTICS for t in TIES}
    assert orders[("trec_eval", "trec_eval")] == orders[("trec_eval", "expected")]
    assert len({repr(orders[(s, t)]) for s in SEMANTICS for t in ("trec_eval",
                                                                   "input_order")}) == 4
    # d<k> has label k; doc ids descending as bytes: d9 .. d3, then d12, d11, d10
    ranked = orders[("trec_eval", "trec_eval")]["q2"]
    assert ranked == [1, 2, 0, 9, 8, 7, 6, 5, 4, 3, 12, 11, 10]
    assert orders[("pytrec_eval", "trec_eval")]["q2"][:3] == [2, 1, 0]  # 1 + 2**-30 ties 1
    assert orders[("trec_eval", "input_order")]["q2"][:3] == [1, 0, 2]
    assert orders[("pytrec_eval", "trec_eval")]["q10"] == [2, 1, 0]  # -0.0, 1e-46, 0.0 tie


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=flat_rows(), descending=st.booleans(), semantics=st.sampled_from(SEMANTICS))
def test_ranked_scores_are_each_rows_own(rows, descending, semantics):
    """:func:`~irmetrics.engine.pack.rank_run`'s scores at each rank are the ordering
    score of the row ranked there, bytes and all: the doc-id tie rule moves a row's score
    with it, so a ``-0.0`` tied with ``0.0`` stays with its document (it once stayed in
    place). Under ``semantics="pytrec_eval"`` they are the row's float32 rounding, whose
    ties (``-0.0`` with ``1e-46``, rounded to ``0.0``) move the same way."""
    from irmetrics.engine.pack import rank_run

    frame = pl.DataFrame([(q, d, s) for q, d, s, _ in named(rows)],
                         schema=["query_id", "doc_id", "score"], orient="row")
    query_ids = np.unique(frame["query_id"].to_numpy().astype(object))
    ranked = rank_run(frame, query_ids, np.zeros(len(query_ids), dtype=bool),
                      doc_id_descending=descending, semantics=semantics)
    own = ordering_scores(frame["score"].to_numpy(), semantics)[ranked.order]
    assert own.tobytes() == np.asarray(ranked.scores).tobytes()
