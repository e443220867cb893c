"""The observed trec_eval 10.0 outputs of docs/reference/trec_eval.md §11 (and §2, §4, §7 examples), literally.

Expected strings are written out by hand from the spec; where the spec shows only some
lines, the remaining ones were computed by hand and the derivation is in the comment.
"""

import math

import pytest

from irmetrics.cli import main
from irmetrics.containers import FLOAT_LABEL_HINT


def run_cli(tmp_path, capsys, qrels, run, *options):
    (tmp_path / "qrels").write_text("".join(line + "\n" for line in qrels.split(" / ")))
    (tmp_path / "run").write_text("".join(line + "\n" for line in run.split(" / ")))
    status = main(["eval", *options, str(tmp_path / "qrels"), str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


TIES_QRELS = "1 0 a 1 / 1 0 b 0 / 1 0 c 1"
TIES_RUN = "1 Q0 a 1 1.0 r / 1 Q0 b 2 1.0 r / 1 Q0 c 3 1.0 r"


def test_tie_break_docno_descending(tmp_path, capsys):
    # All sims 1.0: order c, b, a -> relevant, non-relevant, relevant.
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN,
                             "-q", "-m", "P.1,2,3", "-m", "recip_rank")
    assert status == 0
    assert out == (
        "recip_rank            \t1\t1.0000\n"
        "P_1                   \t1\t1.0000\n"
        "P_2                   \t1\t0.5000\n"
        "P_3                   \t1\t0.6667\n"
        "recip_rank            \tall\t1.0000\n"
        "P_1                   \tall\t1.0000\n"
        "P_2                   \tall\t0.5000\n"
        "P_3                   \tall\t0.6667\n")


def test_tie_break_relstring(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN,
                             "-q", "-m", "relstring", "-m", "P.1,2,3", "-m", "recip_rank")
    assert status == 0
    assert out == (
        "recip_rank            \t1\t1.0000\n"
        "P_1                   \t1\t1.0000\n"
        "P_2                   \t1\t0.5000\n"
        "P_3                   \t1\t0.6667\n"
        "relstring             \t1\t'101'\n"
        "recip_rank            \tall\t1.0000\n"
        "P_1                   \tall\t1.0000\n"
        "P_2                   \tall\t0.5000\n"
        "P_3                   \tall\t0.6667\n")


# docs/reference/trec_eval.md §2.1: trec_eval reads labels with atol (1.9 -> 1, abc -> 0, 2x -> 2). irmetrics refuses
# non-integer labels (docs/semantics.md, "Input we refuse"): the first one is an input error
# naming the file, line, query and doc (exit 2), whatever the measures.
ATOL_QRELS = "1 0 a 1.9 / 1 0 b abc / 1 0 c -1 / 1 0 d -5 / 1 0 e 2x / 1 0 f +3 / 1 0 g 12"
REL_RUN = ("1 Q0 a 1 7 r / 1 Q0 b 2 6 r / 1 Q0 c 3 5 r / 1 Q0 d 4 4 r / 1 Q0 e 5 3 r"
           " / 1 Q0 f 6 2 r / 1 Q0 g 7 1 r / 1 Q0 h 8 0 r")
# The same judgments with the integer labels trec_eval's atol produced: a 1, b 0, e 2.
REL_QRELS = "1 0 a 1 / 1 0 b 0 / 1 0 c -1 / 1 0 d -5 / 1 0 e 2 / 1 0 f +3 / 1 0 g 12"


@pytest.mark.parametrize("label,line,doc", [("1.9", 1, "a"), ("abc", 2, "b"), ("2x", 5, "e")])
@pytest.mark.parametrize("measure", ["num_rel", "relstring"])
def test_rel_parsing_atol_labels_refused(tmp_path, capsys, label, line, doc, measure):
    # each atol example alone (the others replaced by their integer value)
    qrels = REL_QRELS.split(" / ")
    qrels[line - 1] = f"1 0 {doc} {label}"
    status, out, err = run_cli(tmp_path, capsys, " / ".join(qrels), REL_RUN, "-q", "-m", measure)
    assert (status, out) == (2, "")
    # a real number gets the hint about --float-relevance
    hint = FLOAT_LABEL_HINT if label == "1.9" else ""
    assert err == (f"irmetrics eval: {tmp_path / 'qrels'}:{line}: relevance must be an integer,"
                   f" found '{label}'{hint} (query_id '1', doc_id '{doc}')\n")


def test_rel_parsing_atol_first_bad_label_reported(tmp_path, capsys):
    status, out, err = run_cli(tmp_path, capsys, ATOL_QRELS, REL_RUN, "-q", "-m", "num_rel")
    assert (status, out) == (2, "")
    assert err.startswith(f"irmetrics eval: {tmp_path / 'qrels'}:1: relevance must be an"
                          " integer, found '1.9'") and err.count("\n") == 1


def test_rel_parsing_counts(tmp_path, capsys):
    # Relevant (>= 1): a, e, f, g. Judged non-relevant: b (0). c and d (negative) are in the
    # pool but unjudged; h is not in the pool.
    status, out, _ = run_cli(tmp_path, capsys, REL_QRELS, REL_RUN, "-q", "-m", "num_rel",
                             "-m", "num_rel_ret", "-m", "num_nonrel_judged_ret")
    assert status == 0
    assert out == (
        "num_rel               \t1\t4\n"
        "num_rel_ret           \t1\t4\n"
        "num_nonrel_judged_ret \t1\t1\n"
        "num_rel               \tall\t4\n"
        "num_rel_ret           \tall\t4\n"
        "num_nonrel_judged_ret \tall\t1\n")


def test_rel_parsing_relstring(tmp_path, capsys):
    # docs/reference/trec_eval.md §3.3: labels 1, 0 -> '1', '0'; -1, -5 (pool, unjudged) -> '.'; 2, +3 -> '2', '3';
    # 12 (> 9) -> '>'; h (not in the qrels) -> '-'.
    status, out, _ = run_cli(tmp_path, capsys, REL_QRELS, REL_RUN, "-q", "-m", "relstring")
    assert status == 0
    assert out == "relstring             \t1\t'10..23>-'\n"


MISSING_QRELS = "1 0 a 1 / 1 0 b 0 / 2 0 c 1"
MISSING_RUN = "1 Q0 a 1 1.0 r"


def test_missing_query_strict_is_trec_eval_10(tmp_path, capsys):
    status, out, err = run_cli(tmp_path, capsys, MISSING_QRELS, MISSING_RUN,
                               "--strict", "-q", "-m", "map")
    assert status == 4
    assert out == "map                   \t1\t1.0000\n"
    assert err == "trec_eval: result qid '2' not found in qrels\n"


def test_missing_query_default_warns_and_evaluates_the_rest(tmp_path, capsys):
    status, out, err = run_cli(tmp_path, capsys, MISSING_QRELS, MISSING_RUN, "-q", "-m", "map")
    assert status == 0
    assert out == "map                   \t1\t1.0000\nmap                   \tall\t1.0000\n"
    assert "warning" in err and "'2'" in err and "--strict" in err and err.count("\n") == 1


def test_missing_query_with_c(tmp_path, capsys):
    # docs/reference/trec_eval.md §12.4: with -c, num_q all 2 and map all 0.5000.
    status, out, err = run_cli(tmp_path, capsys, "1 0 a 1 / 2 0 c 1",
                               "1 Q0 a 1 1.0 r / 3 Q0 z 1 1.0 r", "-c", "-m", "num_q", "-m", "map")
    assert (status, err) == (0, "")
    assert out == "num_q                 \tall\t2\nmap                   \tall\t0.5000\n"


C_QRELS = "1 0 a 1 / 1 0 b 0 / 2 0 c 1 / 2 0 d 2 / 2 0 e 0"
C_RUN = "1 Q0 a 1 1.0 r / 1 Q0 z 1 0.5 r"


def test_c_placeholder_query_counts(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, C_QRELS, C_RUN, "-q", "-c",
                             "-m", "num_q", "-m", "num_ret", "-m", "num_rel")
    assert status == 0
    assert out == (
        "num_ret               \t1\t2\n"
        "num_rel               \t1\t1\n"
        "num_ret               \t2\t0\n"
        "num_rel               \t2\t2\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t2\n"
        "num_rel               \tall\t3\n")


def test_c_placeholder_query_all(tmp_path, capsys):
    # Query 1 ranks a (1), z (not in pool): ideal_dcg 1/log2(2) = 1, yaap ln(2/1) = 0.6931.
    # Query 2 (placeholder): ideal_dcg 2 + 1/log2(3) = 2.6309, yaap ln(1/3) = -1.0986.
    # Means: ideal_dcg 1.8155, yaap (0.6931 - 1.0986) / 2 = -0.2027.
    status, out, _ = run_cli(tmp_path, capsys, C_QRELS, C_RUN, "-q", "-c", "-m", "num_q",
                             "-m", "num_ret", "-m", "num_rel", "-m", "relstring",
                             "-m", "ideal_dcg", "-m", "yaap")
    assert status == 0
    assert out == (
        "num_ret               \t1\t2\n"
        "num_rel               \t1\t1\n"
        "relstring             \t1\t'1-'\n"
        "ideal_dcg             \t1\t1.0000\n"
        "yaap                  \t1\t0.6931\n"
        "num_ret               \t2\t0\n"
        "num_rel               \t2\t2\n"
        "relstring             \t2\t''\n"
        "ideal_dcg             \t2\t2.6309\n"
        "yaap                  \t2\t-1.0986\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t2\n"
        "num_rel               \tall\t3\n"
        "ideal_dcg             \tall\t1.8155\n"
        "yaap                  \tall\t-0.2027\n")


CL_QRELS = "1 0 a 1 / 1 0 b 2 / 2 0 c 1 / 2 0 d 2 / 2 0 e 0"
CL_RUN = "1 Q0 a 1 1.0 r / 1 Q0 b 1 0.5 r / 2 Q0 c 1 0.5 r"


@pytest.mark.parametrize("level,per_query", [("-l2", ("1", "1")), ("-l0", ("2", "3"))])
def test_c_summary_num_rel_ignores_level(tmp_path, capsys, level, per_query):
    status, out, _ = run_cli(tmp_path, capsys, CL_QRELS, CL_RUN, "-q", "-c", level,
                             "-m", "num_rel")
    assert status == 0
    assert out == (f"num_rel               \t1\t{per_query[0]}\n"
                   f"num_rel               \t2\t{per_query[1]}\n"
                   "num_rel               \tall\t4\n")


NAN_QRELS = "1 0 a 1 / 1 0 b 0 / 1 0 c 1 / 2 0 x 1"
NAN_RUN = ("1 Q0 u1 1 9 r / 1 Q0 a 2 8 r / 1 Q0 u2 3 7 r / 1 Q0 b 4 6 r / 1 Q0 c 5 5 r"
           " / 2 Q0 y 1 1 r / 2 Q0 z 2 1 r")
# Under -J query 1 ranks a, b, c (R = 2, IP = 1, 2/3); query 2 retrieves nothing judged
# (n = 0, R = 1): levels < 0.5 have cutoff lround(p) = 0 and value K/n = 0/0 = -nan,
# levels >= 0.5 have cutoff 1 > K = 0 and value 0. The mean of a -nan is -nan.
NAN_LEVELS = [("0.00", "1.0000", "  -nan", "  -nan"), ("0.10", "1.0000", "  -nan", "  -nan"),
              ("0.20", "1.0000", "  -nan", "  -nan"), ("0.30", "1.0000", "  -nan", "  -nan"),
              ("0.40", "1.0000", "  -nan", "  -nan"), ("0.50", "1.0000", "0.0000", "0.5000"),
              ("0.60", "1.0000", "0.0000", "0.5000"), ("0.70", "1.0000", "0.0000", "0.5000"),
              ("0.80", "0.6667", "0.0000", "0.3333"), ("0.90", "0.6667", "0.0000", "0.3333"),
              ("1.00", "0.6667", "0.0000", "0.3333")]


def test_nan_prints_minus_nan(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, NAN_QRELS, NAN_RUN, "-q", "-J",
                             "-m", "iprec_at_recall")
    assert status == 0
    expected = [f"iprec_at_recall_{p}  \t1\t{q1}\n" for p, q1, _, _ in NAN_LEVELS]
    expected += [f"iprec_at_recall_{p}  \t2\t{q2}\n" for p, _, q2, _ in NAN_LEVELS]
    expected += [f"iprec_at_recall_{p}  \tall\t{a}\n" for p, _, _, a in NAN_LEVELS]
    assert out == "".join(expected)


def test_nan_11pt_avg(tmp_path, capsys):
    # Query 1: (8 * 1 + 3 * 2/3) / 11 = 0.9091; query 2 -nan; mean -nan.
    status, out, _ = run_cli(tmp_path, capsys, NAN_QRELS, NAN_RUN, "-q", "-J", "-m", "11pt_avg")
    assert status == 0
    assert out == ("11pt_avg              \t1\t0.9091\n"
                   "11pt_avg              \t2\t  -nan\n"
                   "11pt_avg              \tall\t  -nan\n")


def test_nan_under_M0(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, NAN_QRELS, NAN_RUN, "-q", "-M0",
                             "-m", "iprec_at_recall..0", "-m", "num_ret")
    assert status == 0
    assert out == ("num_ret               \t1\t0\n"
                   "iprec_at_recall_0.00  \t1\t  -nan\n"
                   "num_ret               \t2\t0\n"
                   "iprec_at_recall_0.00  \t2\t  -nan\n"
                   "num_ret               \tall\t0\n"
                   "iprec_at_recall_0.00  \tall\t  -nan\n")


def _names(out):
    return [line.split("\t")[0].rstrip() for line in out.splitlines()]


def test_parameter_naming_registered(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN,
                             "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3",
                             "-m", "recall.20,2000", "-m", "ndcg.1=3,2=9,4=4.5",
                             "-m", "ndcg_cut.10,20,23.4", "-m", "success.2,5,20")
    assert status == 0
    assert _names(out) == [
        "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25",
        "iprec_at_recall_0.50", "iprec_at_recall_0.75", "P_3", "P_5", "P_7", "recall_20",
        "recall_2000", "ndcg_1=3,2=9,4=4.5", "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23",
        "success_2", "success_5", "success_20"]


def test_parameter_naming_all(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN,
                             "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3",
                             "-m", "recall.20,2000", "-m", "Rprec_mult.5.0,0.2,0.35",
                             "-m", "utility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
                             "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.10,20,23.4",
                             "-m", "success.2,5,20")
    assert status == 0
    assert _names(out) == [
        "iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25",
        "iprec_at_recall_0.50", "iprec_at_recall_0.75", "P_3", "P_5", "P_7", "recall_20",
        "recall_2000", "Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00",
        "utility_2,-1,0,0", "11pt_avg_.25,.5,.75", "ndcg_1=3,2=9,4=4.5", "ndcg_cut_10",
        "ndcg_cut_20", "ndcg_cut_23", "success_2", "success_5", "success_20"]


GAIN_QRELS = "1 0 a 1 / 1 0 b 2 / 1 0 c 0 / 1 0 d 1"
GAIN_RUN = "1 Q0 a 1 3 r / 1 Q0 c 2 2 r / 1 Q0 b 3 1 r"


@pytest.mark.parametrize("spec,expected", [
    ("ndcg", "ndcg                  \tall\t0.6388\n"),
    ("ndcg.1=0.5", "ndcg_1=0.5            \tall\t0.7500\n"),
    ("ndcg.1=1.9,2=1.2", "ndcg_1=1.9,2=1.2      \tall\t0.7465\n"),
])
def test_gain_truncation(tmp_path, capsys, spec, expected):
    status, out, _ = run_cli(tmp_path, capsys, GAIN_QRELS, GAIN_RUN, "-m", spec)
    assert (status, out) == (0, expected)


@pytest.mark.parametrize("spec,expected", [
    ("11pt_avg.0.5,0.2", "11pt_avg_0.5,0.2      \tall\t1.0000\n"),
    ("11pt_avg.0.2,0.5", "11pt_avg_0.2,0.5      \tall\t0.8333\n"),
])
def test_11pt_avg_parameter_order(tmp_path, capsys, spec, expected):
    status, out, _ = run_cli(tmp_path, capsys, GAIN_QRELS, GAIN_RUN, "-m", spec)
    assert (status, out) == (0, expected)


def test_rbp_intended_normalisation(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, "1 0 a 3 / 1 0 b 1 / 1 0 c 0 / 1 0 d 2",
                             "1 Q0 a 1 4 r / 1 Q0 b 2 3 r / 1 Q0 c 3 2 r / 1 Q0 d 4 1 r",
                             "-m", "rbp")
    assert (status, out) == (0, "rbp                   \tall\t0.1786\n")


def test_qid_order_is_strcmp(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, "2 0 a 1 / 10 0 b 1 / 1 0 c 1",
                             "2 Q0 a 1 1 r / 10 Q0 b 1 1 r / 1 Q0 c 1 1 r", "-q", "-m", "map")
    assert status == 0
    assert [line.split("\t")[1] for line in out.splitlines()] == ["1", "10", "2", "all"]


def test_runid_is_last_line_and_extra_fields_ignored(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, "1 0 a 1",
                             "1 Q0 a 1 1.0 r1 / 1 Q0 b 2 0.5 r2 extra fields here",
                             "-m", "runid", "-m", "num_ret")
    assert status == 0
    assert out == "runid                 \tall\tr2\nnum_ret               \tall\t2\n"


def test_nosummary_without_q_prints_nothing(tmp_path, capsys):
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN, "-n")
    assert (status, out) == (0, "")


def test_first_parameter_string_wins(tmp_path, capsys):
    # docs/reference/trec_eval.md §4.2: -m P.5 -m P.10 gives only P_5; -m P.2 -m official keeps P_2.
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN, "-m", "P.5", "-m", "P.10")
    assert (status, out) == (0, "P_5                   \tall\t0.4000\n")
    status, out, _ = run_cli(tmp_path, capsys, TIES_QRELS, TIES_RUN, "-m", "P.2", "-m",
                             "official")
    assert [n for n in _names(out) if n.startswith("P_")] == ["P_2"]


def test_zscores(tmp_path, capsys):
    # map: query 1 = 1.0 -> (1 - 0.5) / 0.25 = 2; query 2 = 0.5 with stddev 0 and
    # v == mean -> 0. num_ret: query 1 = 1 -> (1 - 2) / 1 = -1; query 2 = 2 with stddev
    # 0 and v != mean -> -1000000. Sums and means are over the z-values; every number
    # prints %6.4f. (trec_eval also gives -1000000 for a pair without a line, or crashes;
    # irmetrics refuses that file: docs/cli.md.)
    zfile = tmp_path / "z"
    zfile.write_text("1 map 0.5 0.25\n2 map 0.5 0\n1 num_ret 2 1\n")
    argv = ("1 0 a 1 / 2 0 b 1", "1 Q0 a 1 2 r / 2 Q0 c 1 2 r / 2 Q0 b 2 1 r", "-q", "-Z",
            str(zfile), "-m", "runid", "-m", "num_q", "-m", "num_ret", "-m", "map")
    status, out, err = run_cli(tmp_path, capsys, *argv)
    assert (status, out) == (2, "") and "'num_ret'" in err and "query_id '2'" in err
    zfile.write_text("1 map 0.5 0.25\n2 map 0.5 0\n1 num_ret 2 1\n2 num_ret 5 0\n")
    status, out, _ = run_cli(tmp_path, capsys, *argv)
    assert status == 0
    assert out == (
        "Znum_ret               \t1\t-1.0000\n"
        "Zmap                   \t1\t2.0000\n"
        "Znum_ret               \t2\t-1000000.0000\n"
        "Zmap                   \t2\t0.0000\n"
        "runid                 \tall\tr\n"
        "Znum_q                 \tall\t2.0000\n"
        "Znum_ret               \tall\t-1000001.0000\n"
        "Zmap                   \tall\t1.0000\n")


def test_zscores_geometric_means_need_no_line(tmp_path, capsys):
    # trec_eval's own suite (-q -m all_trec -Z zscores_file, out.test.aqZ) has no z line
    # for gm_map and gm_bpref: they take -1000000 and print exp(-1000000 / n) = 0.0000.
    # Outputs checked against a trec_eval 10.0 binary built from its sources.
    zfile = tmp_path / "z"
    argv = ("1 0 a 1 / 1 0 b 0 / 2 0 b 1 / 2 0 c 1",
            "1 Q0 a 1 2 r / 1 Q0 b 2 1 r / 2 Q0 c 1 2 r / 2 Q0 a 2 1 r / 2 Q0 b 3 0.5 r",
            "-q", "-Z", str(zfile), "-m", "gm_map", "-m", "map")
    per_query_map = ("Zmap                   \t1\t2.0000\n"
                     "Zmap                   \t2\t0.6667\n"
                     "Zmap                   \tall\t1.3333\n")
    zfile.write_text("1 map 0.5 0.25\n2 map 0.5 0.5\n1 gm_map -1 2\n")
    status, out, _ = run_cli(tmp_path, capsys, *argv, "-m", "gm_bpref")
    assert status == 0
    assert out == per_query_map + ("Zgm_map                \tall\t0.0000\n"
                                   "Zgm_bpref              \tall\t0.0000\n")
    # with every line given, gm_map is exp(mean of the z-values of the logs)
    zfile.write_text("1 map 0.5 0.25\n2 map 0.5 0.5\n1 gm_map -1 2\n2 gm_map -3 0.5\n")
    status, out, _ = run_cli(tmp_path, capsys, *argv)
    assert (status, out) == (0, per_query_map + "Zgm_map                \tall\t21.4919\n")
    # a missing line for any other measure is still refused
    zfile.write_text("1 map 0.5 0.25\n1 gm_map -1 2\n")
    status, out, err = run_cli(tmp_path, capsys, *argv)
    assert (status, out) == (2, "") and "'map'" in err and "query_id '2'" in err


def test_positive_nan_prints_nan():
    from irmetrics.cli.formatting import c_double
    assert c_double(math.copysign(math.nan, 1.0)) == "   nan"
    assert c_double(math.copysign(math.nan, -1.0)) == "  -nan"
    assert c_double(-0.0) == "-0.0000"
    assert c_double(0.03125) == "0.0312"
    assert c_double(1234.56785) == "1234.5678"
