"""Float relevance labels: gains of the DCG family, ``label >= level`` for binary
measures, against scikit-learn and against integer labels; strict errors without it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irmetrics as irm
from irmetrics.adapters import from_flat, from_matrix
from irmetrics.exceptions import InputFormatError, ParameterError
from irmetrics.io.trec import read_qrels

BINARY = ["map", "map_cut.2,5", "P.1,3", "recall.2", "Rprec", "recip_rank", "success.2",
          "bpref", "num_rel", "num_rel_ret", "set_F", "iprec_at_recall..5", "relative_P.2"]
GAINS = ["ndcg", "ndcg_cut.1,3,10", "dcg", "ideal_dcg"]


@st.composite
def float_queries(draw):
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        docs = [f"d{i}" for i in range(n)]
        labels = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0, 1.75, 2.0, 3.5]),
                               min_size=n, max_size=n))
        scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
        qrels[f"q{q}"] = dict(zip(docs, labels))
        run[f"q{q}"] = dict(zip(docs, scores))
    return qrels, run


@settings(max_examples=60, deadline=None)
@given(float_queries(), st.sampled_from([1, 2]))
def test_binary_measures_use_label_at_least_level(case, level):
    qrels, run = case
    # The same judgments as integers: relevant (1) iff label >= level, judged 0 otherwise,
    # negative labels stay negative (in the pool, unjudged).
    as_int = {q: {d: (-1 if lab < 0 else int(lab >= level)) for d, lab in j.items()}
              for q, j in qrels.items()}
    got = irm.evaluate(qrels, run, BINARY, relevance="float", relevance_level=level)
    want = irm.evaluate(as_int, run, BINARY, relevance_level=1)
    assert_same(got.to_dict(), want.to_dict(), abs_tol=0.0)


def assert_same(got: dict, want: dict, abs_tol=1e-12):
    """Equal ``{query: {name: value}}`` dicts (NaN equals NaN)."""
    assert got.keys() == want.keys()
    for q in want:
        assert got[q].keys() == want[q].keys()
        for name, value in want[q].items():
            assert got[q][name] == pytest.approx(value, abs=abs_tol, nan_ok=True), (q, name)


@settings(max_examples=60, deadline=None)
@given(float_queries(), st.sampled_from(["trec_eval", "expected"]))
def test_gains_are_the_labels_like_sklearn(case, ties):
    sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn not installed")
    qrels, run = case
    res = irm.evaluate(qrels, run, GAINS, relevance="float", ties=ties).to_dict()
    for q in qrels:
        docs = list(qrels[q])
        gains = np.array([[max(qrels[q][d], 0.0) for d in docs]])
        scores = np.array([[run[q][d] for d in docs]])
        ideal = sorted(gains[0], reverse=True)
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        assert res[q]["ideal_dcg"] == pytest.approx(idcg, abs=1e-12)
        if not gains.any() or len(docs) < 2:
            continue  # sklearn refuses a single document
        if ties == "expected" or len(set(scores[0])) == len(docs):
            for k in (None, 1, 3, 10):
                want = sklearn_metrics.ndcg_score(gains, scores, k=k, ignore_ties=False)
                name = "ndcg" if k is None else f"ndcg_cut_{k}"
                assert res[q][name] == pytest.approx(want, abs=1e-12), (q, name)


@settings(max_examples=40, deadline=None)
@given(float_queries())
def test_integral_float_labels_equal_integer_labels(case):
    qrels, run = case
    whole = {q: {d: float(math.floor(lab)) for d, lab in j.items()} for q, j in qrels.items()}
    as_int = {q: {d: int(lab) for d, lab in j.items()} for q, j in whole.items()}
    names = BINARY + GAINS
    assert_same(irm.evaluate(whole, run, names, relevance="float").to_dict(),
                irm.evaluate(as_int, run, names).to_dict())


def test_adapters_and_dicts_agree():
    scores = np.array([[0.3, 0.9, 0.5, 0.1], [0.2, 0.2, 0.7, 0.4]])
    labels = np.array([[0.5, 2.25, 0.0, -0.5], [1.5, 0.25, 0.0, 3.0]])
    names = ["ndcg_cut.3", "map", "P.2", "ndcg"]
    qrels, run = from_matrix(scores, labels, relevance_type="float")
    assert qrels.relevance_type == "float"
    via_matrix = irm.evaluate(qrels, run, names).to_dict()   # float labels detected
    via_dict = irm.evaluate(qrels.to_dict(), run.to_dict(), names, relevance="float").to_dict()
    flat_q, flat_r = from_flat(scores.ravel(), labels.ravel(), np.repeat([0, 1], 4),
                               relevance_type="float")
    via_flat = irm.evaluate(flat_q, flat_r, names).to_dict()
    assert_same(via_matrix, via_dict)
    assert_same(via_flat, via_dict)
    with pytest.raises(ParameterError, match="`relevance` must hold integers; got 0.5"):
        from_matrix(scores, labels)


def test_file_labels_strict_by_default_with_a_hint(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("q 0 a 1\nq 0 b 0.5\n")
    with pytest.raises(InputFormatError) as err:
        read_qrels(path)
    assert str(err.value) == (f"{path}:2: relevance must be an integer, found '0.5' (graded"
                              " float labels: relevance='float', or --float-relevance)"
                              " (query_id 'q', doc_id 'b')")
    assert read_qrels(path, relevance="float").df["relevance"].to_list() == [1.0, 0.5]
    res = irm.evaluate(str(path), {"q": {"a": 1.0, "b": 2.0}}, ["ndcg"], relevance="float")
    ideal = 1 + 0.5 / math.log2(3)
    assert res.aggregate()["ndcg"] == pytest.approx((0.5 + 1 / math.log2(3)) / ideal)
    path.write_text("q 0 a inf\n")
    with pytest.raises(InputFormatError, match=":1: relevance must be a finite decimal number"):
        read_qrels(path, relevance="float")


def test_float_relevance_refuses_integer_level_machinery():
    with pytest.raises(ParameterError, match=r"got \['G', 'ndcg.1=2'\]"):
        irm.evaluate({"q": {"a": 0.5}}, {"q": {"a": 1.0}}, ["ndcg.1=2", "G", "map"],
                     relevance="float")
    with pytest.raises(ParameterError, match="`relevance` must be one of 'int', 'float'"):
        irm.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["map"], relevance="graded")


def test_cli_float_relevance(tmp_path, capsys):
    from irmetrics.cli import main

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 a 0.5\nq 0 b 2.5\n")
    run.write_text("q Q0 a 1 2.0 r\nq Q0 b 2 1.0 r\n")
    assert main(["eval", "-m", "ndcg", str(qrels), str(run)]) == 2
    err = capsys.readouterr().err
    assert "relevance must be an integer, found '0.5'" in err and "--float-relevance" in err
    assert main(["eval", "--float-relevance", "-m", "ndcg", "-m", "P.1", str(qrels),
                 str(run)]) == 0
    out = capsys.readouterr().out
    want = irm.evaluate(str(qrels), str(run), ["ndcg", "P.1"], relevance="float").aggregate()
    printed = {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}
    assert printed == pytest.approx({k: round(v, 4) for k, v in want.items()}, abs=1e-12)


def test_compare_cli_float_relevance(tmp_path, capsys):
    """irmetrics compare reads float labels with --float-relevance, as eval does, and the
    table's means are those of irm.evaluate; -q evaluation files refuse the option."""
    import json

    from irmetrics.cli import main

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{i} 0 d{j} {0.25 * ((i + j) % 5)}\n"
                             for i in range(6) for j in range(4)))
    runs = []
    for name, sign in (("a", 1), ("b", -1)):
        path = tmp_path / name
        path.write_text("".join(f"q{i} Q0 d{j} {j} {sign * j + 0.5 * ((i * j) % 3)} {name}\n"
                                for i in range(6) for j in range(4)))
        runs.append(path)
    argv = ["compare", "-m", "ndcg", "--format", "json", str(qrels), *map(str, runs)]
    assert main(argv) == 2
    assert "--float-relevance" in capsys.readouterr().err
    assert main(["compare", "--float-relevance", *argv[1:]]) == 0
    table = json.loads(capsys.readouterr().out)
    rows = table["rows"] if isinstance(table, dict) and "rows" in table else table
    want = {name: irm.evaluate(str(qrels), str(path), ["ndcg"], relevance="float")
            .aggregate()["ndcg"] for name, path in zip("ab", runs)}
    text = json.dumps(rows)
    for value in want.values():
        assert f"{value:.6f}"[:6] in text
    eval_files = []
    for path in runs:
        out = tmp_path / (path.name + ".q")
        assert main(["eval", "-q", "--float-relevance", "-m", "ndcg", str(qrels),
                     str(path)]) == 0
        out.write_text(capsys.readouterr().out)
        eval_files.append(str(out))
    from irmetrics.cli.options import EXIT_USAGE
    assert main(["compare", "--float-relevance", *eval_files]) == EXIT_USAGE
    assert "--float-relevance changes how runs are evaluated" in capsys.readouterr().err
