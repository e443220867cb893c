"""``irmetrics eval`` output equals the reference printer on random TREC files.

Byte-for-byte comparison of stdout with ``tests/reference/trec_eval_ref.py``'s
``format_trec`` over random qrels/runs (ties, graded and negative labels, unjudged
documents, queries only in one file) and random options (-q -c -M -J -l). Skipped
where the reference is not in the tree.
"""


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_goldens import ALL_TREC

ref = pytest.importorskip("tests.reference.trec_eval_ref")

from irmetrics.cli import main  # noqa: E402
from irmetrics.measures.registry import REGISTRY  # noqa: E402

#: every all_trec measure registered in this tree (all of them once merged).
MEASURES = [m for m in ALL_TREC if m in REGISTRY]
DOCS = [f"d{i}" for i in range(9)]
QIDS = ["1", "2", "10", "3a"]


@st.composite
def inputs(draw):
    qrels_lines, run_lines = [], []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True)):
            qrels_lines.append(f"{q} 0 {d} {draw(st.integers(-1, 3))}")
    for q in draw(st.lists(st.sampled_from(QIDS + ["99"]), min_size=1, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True)):
            run_lines.append(f"{q} Q0 {d} 0 {draw(st.integers(0, 4)) / 4} r")
    options = {
        "per_query": draw(st.booleans()),
        "complete": draw(st.booleans()),
        "judged_only": draw(st.booleans()),
        "max_docs": draw(st.one_of(st.none(), st.integers(0, 4))),
        "relevance_level": draw(st.integers(0, 3)),
    }
    return qrels_lines, run_lines, options


def _argv(options):
    argv = ["-q"] if options["per_query"] else []
    argv += ["-c"] if options["complete"] else []
    argv += ["-J"] if options["judged_only"] else []
    argv += [] if options["max_docs"] is None else [f"-M{options['max_docs']}"]
    argv += ["-l", str(options["relevance_level"])]
    for m in MEASURES:
        argv += ["-m", m]
    return argv


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(inputs())
def test_cli_equals_reference(tmp_path, capsys, data):
    qrels_lines, run_lines, options = data
    (tmp_path / "q").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "r").write_text("\n".join(run_lines) + "\n")
    qrels = {}
    for line in qrels_lines:
        q, _, d, rel = line.split()
        qrels.setdefault(q, {})[d] = int(rel)
    run = {}
    for line in run_lines:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    kwargs = {k: v for k, v in options.items() if k != "per_query"}
    try:
        expected = ref.evaluate(qrels, run, MEASURES, run_id="r", **kwargs)
    except ValueError:  # no query in both files
        assert main(["eval", *_argv(options), str(tmp_path / "q"), str(tmp_path / "r")]) == 7
        capsys.readouterr()
        return
    status = main(["eval", *_argv(options), str(tmp_path / "q"), str(tmp_path / "r")])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out == expected.format_trec(per_query=options["per_query"])
