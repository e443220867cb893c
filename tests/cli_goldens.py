"""Golden outputs of ``irmetrics eval``, generated from the reference printer (docs/reference/trec_eval.md).

Each case gives the CLI arguments and, separately and by hand, the same options as
keyword arguments of the reference (``tests/reference/trec_eval_ref.py``), so a
misparsed option cannot make the CLI and its golden agree by construction.

Regenerate (writes ``fixtures/cli/golden/<case>.txt``)::

    python tests/cli_goldens.py --regenerate [--reference path/to/trec_eval_ref.py]

The reference prints what trec_eval 10 prints (docs/reference/trec_eval.md §7) for the queries it evaluates;
like ``irmetrics eval`` by default it skips a qrels query the run lacks (the CLI also
warns on stderr; the golden is stdout only).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cli"
GOLDEN = FIXTURES / "golden"
QRELS = FIXTURES / "qrels.txt"
RUN_A = FIXTURES / "run_a.txt"  # lacks qrels query 4, has extra query 99, ties, 105 docs in q3
RUN_B = FIXTURES / "run_b.txt"  # every qrels query, extra query 7, a comment line

#: trec_eval's all_trec members (docs/reference/trec_eval.md §5, group T), for deciding which cases need
#: measures not yet registered.
ALL_TREC = ("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank"
            " iprec_at_recall P relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg"
            " binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P success set_P"
            " set_relative_P set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid"
            " unj").split()
OFFICIAL = ("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank"
            " iprec_at_recall P").split()

PARAMETERISED = ["iprec_at_recall..10,.20,.25", "P.5,7,3", "recall.20,2000",
                 "Rprec_mult.5.0,0.2", "utility.2,-1,0,0", "11pt_avg..25,.5", "ndcg.1=3,2=9",
                 "ndcg_cut.10,20", "success.2,5,20"]


@dataclass(frozen=True)
class Case:
    """``argv`` for the CLI (files appended), ``ref`` for the reference, ``needs``:
    trec_eval measure names the case uses."""

    name: str
    purpose: str
    argv: tuple
    runs: tuple = (RUN_A,)
    measures: tuple = ("official",)
    ref: dict = field(default_factory=dict)
    per_query: bool = False
    summary: bool = True
    needs: tuple = tuple(OFFICIAL)


def _m(*specs):
    return tuple(a for s in specs for a in ("-m", s))


CASES = [
    Case("default", "no options: official measures, summary only", ()),
    Case("all_trec", "-q -m all_trec: every trec_eval qrels measure, per query and summary",
         ("-q", "-m", "all_trec"), runs=(RUN_B,), measures=("all_trec",), per_query=True,
         needs=tuple(ALL_TREC)),
    Case("q", "-q: per-query blocks in strcmp qid order (1, 10, 2, 3, 5), then summary",
         ("-q",), per_query=True),
    Case("c", "-q -c: query 4 scored on the placeholder ranking; summary num_rel rule",
         ("-q", "-c"), ref={"complete": True}, per_query=True),
    Case("c_M100", "-c -M100: truncation drops query 3's relevant document at rank 103",
         ("-q", "-c", "-M100"), ref={"complete": True, "max_docs": 100}, per_query=True),
    Case("c_l2", "-c -l2: per-query num_rel at level 2, summary num_rel counts labels > 0",
         ("-q", "-c", "-l2") + _m("num_rel", "num_rel_ret", "map", "P.5"),
         measures=("num_rel", "num_rel_ret", "map", "P.5"),
         ref={"complete": True, "relevance_level": 2}, per_query=True,
         needs=("num_rel", "num_rel_ret", "map", "P")),
    Case("l2_relstring", "-q -l2 with relstring: binary measures at level 2, codes . - >",
         ("-q", "-l2") + _m("relstring", "official", "ndcg"),
         measures=("relstring", "official", "ndcg"), ref={"relevance_level": 2},
         per_query=True, needs=tuple(OFFICIAL) + ("relstring", "ndcg")),
    Case("parameterised", "the parameterised set: names, sorting, %3.2f and as-typed names",
         ("-q",) + _m(*PARAMETERISED), runs=(RUN_B,), measures=tuple(PARAMETERISED),
         per_query=True, needs=tuple(s.split(".", 1)[0] for s in PARAMETERISED)),
    Case("M0", "-M0: empty rankings, NaN (-nan) from 0/0 in iprec_at_recall; P and map 0",
         ("-q", "-M0") + _m("iprec_at_recall", "map", "P.5", "num_ret"),
         measures=("iprec_at_recall", "map", "P.5", "num_ret"), ref={"max_docs": 0},
         per_query=True, needs=("iprec_at_recall", "map", "P", "num_ret")),
    Case("J", "-J: unjudged and non-pool documents removed before ranking",
         ("-q", "-J"), ref={"judged_only": True}, per_query=True),
    Case("two_runs_n", "two runs with -q -n: one block per run, no summary lines",
         ("-q", "-n") + _m("map", "P.5", "ndcg_cut.3"), runs=(RUN_A, RUN_B),
         measures=("map", "P.5", "ndcg_cut.3"), per_query=True, summary=False,
         needs=("map", "P", "ndcg_cut")),
]


def read_qrels(path: Path, ref) -> dict:
    """trec_eval qrels lines (docs/reference/trec_eval.md §2.1) to ``{qid: {doc: rel}}``; one comment line."""
    out: dict = {}
    for line in path.read_bytes().decode().split("\n"):
        if not line or line.startswith("#"):
            continue
        qid, _, doc, rel = line.split()
        out.setdefault(qid, {})[doc] = ref.atol(rel)
    return out


def read_run(path: Path, ref) -> tuple[dict, str]:
    """trec_eval results lines (docs/reference/trec_eval.md §2.2) to ``{qid: {doc: score}}`` and the run id."""
    out: dict = {}
    run_id = ""
    for line in path.read_bytes().decode().split("\n"):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        out.setdefault(fields[0], {})[fields[2]] = ref.atof(fields[4])
        run_id = fields[5]
    return out, run_id


def load_reference(path: Path | None):
    if path is None:
        from tests.reference import trec_eval_ref
        return trec_eval_ref
    spec = importlib.util.spec_from_file_location("trec_eval_ref", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["trec_eval_ref"] = module
    spec.loader.exec_module(module)
    return module


def expected_output(case: Case, ref) -> str:
    qrels = read_qrels(QRELS, ref)
    text = []
    for run_path in case.runs:
        run, run_id = read_run(run_path, ref)
        result = ref.evaluate(qrels, run, list(case.measures), run_id=run_id, **case.ref)
        out = result.format_trec(per_query=case.per_query)
        if not case.summary:
            out = "".join(line for line in out.splitlines(keepends=True)
                          if line.split("\t")[1] != "all")
        text.append(out)
    return "".join(text)


def golden_path(case: Case) -> Path:
    return GOLDEN / f"{case.name}.txt"


def cli_argv(case: Case) -> list[str]:
    return list(case.argv) + [str(QRELS)] + [str(r) for r in case.runs]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--regenerate", action="store_true", required=True)
    parser.add_argument("--reference", type=Path,
                        help="path of trec_eval_ref.py (default tests/reference)")
    args = parser.parse_args(argv)
    ref = load_reference(args.reference)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        golden_path(case).write_text(expected_output(case, ref))
        print(f"wrote {golden_path(case).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
