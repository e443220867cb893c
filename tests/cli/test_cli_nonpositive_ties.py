"""``irmetrics eval`` bytes with and without the file road's tie shortcut for codes <= 0.

``irmetrics.evaluate.nonpositive_alike`` lets the file and table roads leave tie groups
whose codes differ only among codes <= 0 (unjudged, judged 0, negative labels) in the
run's order. tests/engine/test_file_road_nonpositive_ties.py checks the values of a few
measures; here the whole command line is compared, byte for byte, with the shortcut on
and off: measures drawn from the whole trec_eval set (gain tables, cutoffs inside tie
groups, measures that read judgedness), friendly names with options, ``-l``, ``-J``,
``-M`` inside tie groups, ``-c``, ``-q``, ``-n``, ``--semantics pytrec_eval`` (float32
ties), ``--ties input_order``, several runs, a Parquet run (the table road), chunks cut
anywhere, 1 and 2 threads.

With ``IRMETRICS_TREC_EVAL`` set to a trec_eval 10 binary, the output is also compared
with trec_eval's where trec_eval takes the command and evaluates it (its failures on
queries judged only negative are undefined behaviour, docs/reference/trec_eval.md §10,
and a qrels query missing from the run without ``-c`` is a deliberate difference,
docs/cli.md).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from unittest import mock

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from irmetrics.cli import main
from tests._file_road import plain_chunk_bytes

import irmetrics.evaluate  # noqa: F401  (the module, which the name `evaluate` hides)

EVALUATE = sys.modules["irmetrics.evaluate"]
TREC_EVAL = os.environ.get("IRMETRICS_TREC_EVAL")

DOCS = ["d0", "d1", "d2", "d3", "d10", "d11", "d20", "D1", "a", "b", "zz", "d1x", "E", "d9"]
#: Listed as reading codes <= 0 alike (the P family etc. take cutoffs below).
ALIKE = ["map", "Rprec", "recip_rank", "ndcg", "num_ret", "num_rel", "num_rel_ret", "num_q",
         "runid"]
CUTOFF = ["P", "recall", "success", "map_cut", "ndcg_cut"]
#: trec_eval measures not listed: some read judgedness, ranks of unjudged entries, gains.
OTHER = ["bpref", "infAP", "num_nonrel_judged_ret", "Rndcg", "rbp", "rbp_resid", "relstring",
         "set_F", "set_P", "set_recall", "set_map", "11pt_avg", "G", "binG", "ndcg_rel",
         "utility", "gm_map", "gm_bpref", "Rprec_mult", "iprec_at_recall", "unj.2",
         "relative_P.2", "ndcg.1=2", "ndcg.0=1", "ndcg.-1=3", "ndcg.-2=2", "ndcg.1=-1"]
#: irmetrics only (not compared with trec_eval).
FRIENDLY = ["P(rel=2)@2", "P(rel=0)@2", "nDCG@2", "AP", "RR", "R@2", "AP(judged_only=True)",
            "nDCG(gains={0:1,1:2})@2", "P(judged_only=True)@1", "Judged@2", "RR(rel=2)",
            "ndcg_cut(binary=True).2"]


@st.composite
def commands(draw):
    """Qrels, runs (dense ties, mostly unjudged and non-relevant) and a command line."""
    qrels, runs = [], [[] for _ in range(draw(st.sampled_from([1, 1, 1, 2])))]
    descending = draw(st.sampled_from([True, True, True, False]))
    for qi in range(draw(st.integers(1, 3))):
        q = f"q{qi}"
        pool = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=10))
        for d in pool:
            label = draw(st.sampled_from([None, None, None, -2, -1, 0, 0, 0, 1, 2, 3]))
            if label is not None:
                qrels.append(f"{q} 0 {d} {label}\n")
        for run in runs:
            if qi and draw(st.integers(0, 9)) == 0:
                continue  # a qrels query missing from this run
            docs = draw(st.permutations(pool))
            scores = [draw(st.sampled_from([1.0, 1.0, 2.0, 2.0, 3.0, 1.00000001])) for _ in docs]
            if descending:
                scores.sort(reverse=True)  # stable: the tie groups keep the drawn order
            run += [(q, d, s) for d, s in zip(docs, scores)]
    if not qrels:
        qrels.append("q0 0 d0 1\n")
    measures = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["alike"] * 4 + ["cutoff"] * 4 + ["other", "friendly"]))
        if kind == "alike":
            measures.append(draw(st.sampled_from(ALIKE)))
        elif kind == "cutoff":
            ks = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3, unique=True))
            measures.append(draw(st.sampled_from(CUTOFF)) + "." + ",".join(map(str, ks)))
        else:
            measures.append(draw(st.sampled_from(OTHER if kind == "other" else FRIENDLY)))
    options = []
    level = draw(st.sampled_from([None, None, None, 2, 0, -1, 3]))
    options += [] if level is None else ["-l", str(level)]
    options += ["-J"] if draw(st.integers(0, 9)) == 0 else []
    max_docs = draw(st.sampled_from([None, None, None, 0, 1, 2, 3, 5]))
    options += [] if max_docs is None else ["-M", str(max_docs)]
    options += ["-c"] if draw(st.integers(0, 4)) == 0 else []
    options += ["-q"] if draw(st.integers(0, 9)) < 7 else []
    options += ["-n"] if draw(st.integers(0, 9)) == 0 else []
    extra = draw(st.sampled_from([[]] * 6 + [["--semantics", "pytrec_eval"],
                                             ["--ties", "input_order"]]))
    return ("".join(qrels), runs, measures, options, extra, draw(st.sampled_from(["1", "2"])),
            draw(st.sampled_from([0, 0, 1, 40])), draw(st.booleans()))


def _cli(argv, chunk_bytes, *, shortcut):
    off = mock.patch.object(EVALUATE, "nonpositive_alike", lambda *a: False)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    err = io.StringIO()
    with mock.patch.object(sys, "stdout", out), mock.patch.object(sys, "stderr", err), \
            (mock.patch.dict({}) if shortcut else off), \
            plain_chunk_bytes(chunk_bytes):
        status = main(argv)
        out.flush()
    return status, out.buffer.getvalue(), err.getvalue()


#: A tie of a judged 0 (d1) and an unjudged entry (d2) cut by -M 1: trec_eval keeps d2
#: (doc ids descending), the run's order d1; num_nonrel_judged_ret tells them apart.
CUT_TIE = ("q0 0 d1 0\nq0 0 d3 1\n", [[("q0", "d1", 2.0), ("q0", "d2", 2.0),
                                       ("q0", "d3", 1.0)]])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=commands())
@example(case=(*CUT_TIE, ["map", "num_nonrel_judged_ret"], ["-M", "1"], [], "1", 0, False))
@example(case=(*CUT_TIE, ["P.1", "relstring"], ["-q"], [], "1", 0, False))
@example(case=(*CUT_TIE, ["ndcg.-1=3", "ndcg_cut.1"], [], [], "1", 0, False))
def test_the_shortcut_changes_no_byte(case):
    qrels, runs, measures, options, extra, threads, chunk_bytes, parquet = case
    with tempfile.TemporaryDirectory() as tmp:
        qrels_path = os.path.join(tmp, "qrels")
        with open(qrels_path, "w") as fh:
            fh.write(qrels)
        run_paths = []
        for i, run in enumerate(runs):
            run_paths.append(os.path.join(tmp, f"run{i}"))
            with open(run_paths[-1], "w") as fh:
                fh.writelines(f"{q} Q0 {d} {k} {s!r} r{i}\n" for k, (q, d, s) in enumerate(run))
        files = [qrels_path, *run_paths]
        if parquet and len(runs) == 1:  # the table road
            files[1] = os.path.join(tmp, "run0.parquet")
            pl.DataFrame(runs[0], schema=["query_id", "doc_id", "score"],
                         orient="row").write_parquet(files[1])
        wanted = [a for m in measures for a in ("-m", m)]
        argv = ["eval", "--verbose", "--threads", threads, *options, *extra, *wanted, *files]
        status, out, err = _cli(argv, chunk_bytes, shortcut=True)
        assert (status, out) == _cli(argv, chunk_bytes, shortcut=False)[:2]
        if status == 0:
            assert " road file " in err or " road table " in err, err
        if TREC_EVAL and not extra and len(runs) == 1 and files[1] == run_paths[0] \
                and all(m in ALIKE or m in OTHER or m.split(".")[0] in CUTOFF
                        for m in measures):
            te = subprocess.run([TREC_EVAL, *options, *wanted, *files], capture_output=True)
            missing = b"not found in qrels" in te.stderr and "-c" not in options
            labels: dict = {}
            for line in qrels.splitlines():
                q, _, _, label = line.split()
                labels.setdefault(q, []).append(int(label))
            # all-negative judgments: trec_eval's undefined behaviour (docs/reference/trec_eval.md §10)
            undefined = any(max(v) < 0 for v in labels.values())
            if te.returncode == 0 and not missing and not undefined:
                assert (status, out) == (0, te.stdout)


@pytest.mark.skipif(not TREC_EVAL, reason="IRMETRICS_TREC_EVAL (a trec_eval 10 binary) is "
                                          "not set")
def test_the_cut_tie_matches_trec_eval():
    qrels, runs = CUT_TIE
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, "qrels"), os.path.join(tmp, "run")]
        with open(paths[0], "w") as fh:
            fh.write(qrels)
        with open(paths[1], "w") as fh:
            fh.writelines(f"{q} Q0 {d} {k} {s} r\n" for k, (q, d, s) in enumerate(runs[0]))
        for args in (["-M", "1", "-m", "map", "-m", "num_nonrel_judged_ret"],
                     ["-M", "1", "-q", "-m", "P.1", "-m", "num_ret", "-m", "ndcg"]):
            te = subprocess.run([TREC_EVAL, *args, *paths], capture_output=True, check=True)
            assert _cli(["eval", *args, *paths], 0, shortcut=True)[:2] == (0, te.stdout)
