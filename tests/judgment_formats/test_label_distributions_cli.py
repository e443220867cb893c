"""``irmetrics eval --label-distributions``: the bytes it prints are evaluate_uncertain's
numbers in trec_eval's layout, and a bad distribution file stops with file:line, query
and document."""

from __future__ import annotations

from pathlib import Path

import pytest

from irmetrics.cli import main
from irmetrics.judgment_formats import evaluate_uncertain

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "meta_evaluation"
HUMAN = str(FIXTURES / "qrels.human.txt")
LABELS = str(FIXTURES / "labels.llm.dist.txt")
DENSE = str(FIXTURES / "dense.run")


def _expected(measures, samples, *, per_query=False) -> str:
    ex = evaluate_uncertain(HUMAN, LABELS, DENSE, measures, samples=samples)
    res = ex.results
    lines = []
    if per_query:
        for i, q in enumerate(res.query_ids):
            for name in res.names:
                lines.append("%-22s\t%s\t%.4f\n" % (name, q, res.values(name)[i]))
    summary = res.aggregate()
    for name in res.names:
        if name.endswith("_se"):
            continue
        for out, value in ((name, summary[name]), (name + "_se", ex.se[name]),
                           (name + "_ci_low", float(ex.intervals[name].low)),
                           (name + "_ci_high", float(ex.intervals[name].high))):
            lines.append("%-22s\t%s\t%.4f\n" % (out, "all", value))
    return "".join(lines)


def test_summary_bytes(capsys):
    assert main(["eval", "--label-distributions", LABELS, "--label-samples", "200",
                 "-m", "P.10", "-m", "map", "-m", "ndcg_cut.10", HUMAN, DENSE]) == 0
    out = capsys.readouterr().out
    assert out == _expected(["P.10", "map", "ndcg_cut.10"], 200)
    # The numbers the docs page shows (200 samples, seed 0).
    assert out.startswith("map                   \tall\t0.8088\nmap_se                \tall"
                          "\t0.0004\nmap_ci_low            \tall\t0.7817\n")
    assert "P_10_se               \tall\t0.0000\n" in out  # exact: no label error


def test_per_query_bytes_and_default_measures(capsys):
    assert main(["eval", "--label-distributions", LABELS, "--label-samples", "20", "-q",
                 "-m", "map", HUMAN, DENSE]) == 0
    assert capsys.readouterr().out == _expected(["map"], 20, per_query=True)
    assert main(["eval", "--label-distributions", LABELS, "--label-samples", "4", HUMAN,
                 DENSE]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    # The official scores, never the counts or the run tag.
    assert "map_ci_high" in names and "runid" not in names and "num_ret" not in names


@pytest.mark.parametrize("text, plain, message", [
    ("1001 0 new1 0 0.25\n1001 0 new1 1 0.5\n", None,
     ":1: `probabilities` must sum to 1; got 0.75 (query_id '1001', doc_id 'new1')"),
    ("1001 0 new1 0 0.5\n\n1001 0 new1 7 0.5\n", None,
     ":3: `label` must be in the grade range [0, 3]; got 7 (query_id '1001', doc_id 'new1')"),
    ("1001 0 new1 0 1\n1001 0 doc 1 1\n", "doc",
     ":2: a label distribution must not be given for a document the qrels judge plainly"),
    ("1001 0 new1 0 1 extra\n", None, ":1: a label distribution line must be"),
    ("1001 0 new1 0 x\n", None, ":1: label must be an integer and prob a number"),
])
def test_bad_files_name_file_line_query_doc(tmp_path, capsys, text, plain, message):
    if plain:  # a document the human qrels judge
        doc = Path(HUMAN).read_text().split("\n", 1)[0].split()
        text = text.replace("1001 0 doc", f"{doc[0]} 0 {doc[2]}")
    path = tmp_path / "dist.txt"
    path.write_text(text)
    code = main(["eval", "--label-distributions", str(path), "-m", "map", HUMAN, DENSE])
    err = capsys.readouterr().err
    assert code == 2 and f"{path}{message}" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("extra", [["--bounds"], ["-J"], ["--format", "json"],
                                   ["--fill-from", HUMAN], ["--tie-report"]])
def test_refused_options(capsys, extra):
    assert main(["eval", "--label-distributions", LABELS, *extra, HUMAN, DENSE]) == 1
    assert "--label-distributions prints its own" in capsys.readouterr().err


def test_label_samples_alone_and_too_few(capsys):
    assert main(["eval", "--label-samples", "5", HUMAN, DENSE]) == 1
    assert "--label-samples goes with --label-distributions" in capsys.readouterr().err
    assert main(["eval", "--label-distributions", LABELS, "--label-samples", "1", HUMAN,
                 DENSE]) != 0
    assert "--label-samples" in capsys.readouterr().err
