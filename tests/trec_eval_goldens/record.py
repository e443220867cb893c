"""Record the real trec_eval's outputs (stdout, byte for byte) as goldens under
fixtures/trec_eval/; tests/cli/test_trec_eval_goldens.py replays them through ``irmetrics eval``.

Not a test (pytest does not collect it) and irmetrics is not imported. Given a trec_eval
source tree and the binary built from it, run from a clone::

    python tests/trec_eval_goldens/record.py --trec-eval /path/to/trec_eval/trec_eval \\
        --source /path/to/trec_eval

``--source`` is only read for the provenance written into the golden (``git rev-parse
HEAD`` there, and the version the binary prints). The recorded set:

* the repository's own fixtures (fixtures/cli, fixtures/example, fixtures/compare,
  fixtures/meta_evaluation), named by path and checked by SHA-256 at replay;
* seeded generated inputs, stored inline: graded labels -1..3, queries without relevant
  documents, qrels queries missing from the run and run queries missing from the qrels,
  unjudged documents, heavy score ties (equal scores also spelled ``1``, ``1.0``,
  ``1e0``), negative scores, lists shorter and longer than every cutoff, byte-ordered
  query ids (``1 < 10 < 2``); each under the options of ``VARIANTS`` (every measure,
  ``-q``, ``-c``, ``-M``, ``-J``, ``-l``, ``-N``, ``-n``, ``-Z``, parameterised measures);
* preference judgments (``-R prefs``, ``-R qrels_prefs``) and judgment groups
  (``-R qrels_jg``).

File: ``{"trec_eval": {"repository", "commit", "version"}, "files": {name: text or
{"fixture": path, "sha256": hex}}, "cases": [{"name", "args", "status", "stdout"}]}``; ``args``
name files of ``files`` (the replay writes them into one directory and runs there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "fixtures" / "trec_eval" / "trec_eval-10.0.json"
REPOSITORY = "https://github.com/usnistgov/trec_eval"

#: Measures outside all_trec that read trec qrels.
EXTRA = ["dcg", "ideal_dcg", "yaap"]
PARAMETERISED = ["P.1,3,100", "recall.2,50", "ndcg_cut.1,4,1000", "map_cut.2,7",
                 "success.1,3,10", "iprec_at_recall..33,.66,1", "Rprec_mult.0.5,2.0",
                 "utility.1,-2,0,-1", "11pt_avg..1,.9", "ndcg.0=0.5,1=1,2=3,3=7",
                 "relstring.7", "rbp.p=0.5,2=4", "rbp_resid.p=0.95", "set_F.0.5", "G.1=2,3=1",
                 "binG", "relative_P.2,40", "Rndcg.2=5", "ndcg_rel.1=2,2=2",
                 "set_P", "set_recall", "set_map", "set_relative_P", "gm_map", "gm_bpref"]

#: Options for the generated qrels/run pairs; ``{Z}`` stands for the z-score file.
VARIANTS = [
    [],
    ["-q", "-m", "all_trec"],
    ["-c", "-m", "all_trec"],
    ["-q", "-c", "-M5", "-m", "official"],
    ["-J", "-m", "all_trec"],
    ["-l2", "-m", "all_trec"],
    ["-q", "-l3", "-c", "-J", "-m", "official", "-m", "ndcg_cut.3"],
    ["-q", *[a for m in EXTRA for a in ("-m", m)]],
    ["-q", *[a for m in PARAMETERISED for a in ("-m", m)]],
    ["-q", "-M0", "-m", "iprec_at_recall", "-m", "map", "-m", "P.5", "-m", "num_ret"],
    ["-q", "-n", "-N", "200", "-m", "utility.2,-1,0,0", "-m", "set"],
    ["-c", "-M3", "-l2", "-m", "all_trec"],
    ["-q", "-c", "-M3", "-l2", "-m", "official", "-m", "ndcg_cut.2,5", "-m", "relstring"],
    ["-q", "-Z", "{Z}", "-m", "official", "-m", "ndcg"],
]


#: The per-query names ``-m official -m ndcg`` prints (and gm_map, which -Z also looks up).
Z_MEASURES = (["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
               "recip_rank"] + [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
              + [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)] + ["ndcg"])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- inputs

def score_text(rng: random.Random, value: float) -> str:
    """An equal score in one of several spellings (trec_eval reads them with atof)."""
    if value == int(value) and rng.random() < 0.5:
        return rng.choice([f"{int(value)}", f"{value:.1f}", f"{value:e}"])
    return f"{value:.4f}" if rng.random() < 0.7 else repr(value)


def generated_pair(seed: int) -> tuple[str, str, str]:
    """A seeded qrels, run and z-score file with the edge cases of the module docstring."""
    rng = random.Random(seed)
    qids = rng.sample(["1", "2", "10", "301", "302", "q-a", "q_b", "7"], rng.randint(2, 6))
    qrels_lines, run_lines, z_lines = [], [], []
    missing_from_run = qids[0] if len(qids) > 2 and rng.random() < 0.15 else None
    no_relevant = qids[1] if rng.random() < 0.5 else None
    run_id = f"gen{seed}"
    tie_values = [rng.choice([0.0, 1.0, 2.0, -1.0, 0.5]) for _ in range(3)]
    for qid in qids:
        pool = [f"D{rng.randint(0, 60):03d}" for _ in range(rng.randint(1, 25))]
        pool = sorted(set(pool), key=pool.index)
        for doc in pool:
            label = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3])
            if qid == no_relevant and label > 0:
                label = rng.choice([0, -1])
            qrels_lines.append(f"{qid} 0 {doc} {label}")
        if qid == missing_from_run:
            continue
        length = rng.choice([1, 1, 3, 8, 15, 40, 120])
        judged_share = rng.random()
        docs = [d for d in pool if rng.random() < judged_share]
        extra = [f"U{n:03d}" for n in rng.sample(range(500), max(0, length - len(docs)))]
        docs = (docs + extra)[:length]
        rng.shuffle(docs)
        tie_heavy = rng.random() < 0.5
        for rank, doc in enumerate(docs, 1):
            if tie_heavy:
                value = rng.choice(tie_values)
            else:
                value = round(rng.uniform(-5, 20), rng.choice([1, 2, 4]))
            run_lines.append(f"{qid} Q0 {doc} {rank} {score_text(rng, value)} {run_id}")
    # a query only in the run
    run_lines.append(f"999 Q0 X1 1 1.5 {run_id}")
    rng.shuffle(run_lines)
    # every (query, measure) pair of VARIANTS' -Z case: irmetrics refuses an incomplete
    # file (docs/cli.md); stddev 0 with mean 0 or 1 reaches trec_eval's v == mean branch
    for qid in qids:
        for measure in Z_MEASURES:
            mean = rng.choice([0.0, 1.0, round(rng.uniform(0, 1), 4)])
            z_lines.append(f"{qid} {measure} {mean:.4f} "
                           f"{rng.choice([0.0, rng.uniform(0.01, 0.5)]):.4f}")
    return ("\n".join(qrels_lines) + "\n", "\n".join(run_lines) + "\n",
            "\n".join(z_lines) + "\n")


def generated_prefs(seed: int) -> tuple[str, str, str]:
    """Preference judgments ``qid jg jsg doc level``, judgment-group qrels ``qid jg doc
    rel`` and a run over their documents."""
    rng = random.Random(10_000 + seed)
    qids = rng.sample(["1", "2", "10", "q3"], rng.randint(1, 4))
    prefs, jg, run = [], [], []
    for qid in qids:
        docs = [f"P{n:02d}" for n in rng.sample(range(40), rng.randint(2, 14))]
        for group in range(rng.randint(1, 3)):
            # one level per document and group: sub-groups agree (trec_eval refuses
            # inconsistent preferences)
            levels = {doc: rng.choice([0, 0, 1, 2, 3.5]) for doc in docs}
            for sub in range(rng.randint(1, 2)):
                for doc in rng.sample(docs, rng.randint(1, len(docs))):
                    prefs.append(f"{qid} g{group} s{sub} {doc} {levels[doc]}")
            for doc in rng.sample(docs, rng.randint(1, len(docs))):
                jg.append(f"{qid} {group} {doc} {rng.choice([0, 1, 1, 2])}")
        retrieved = rng.sample(docs, rng.randint(1, len(docs))) + [f"N{n}" for n in range(
            rng.randint(0, 4))]
        for rank, doc in enumerate(retrieved, 1):
            value = rng.choice([1.0, 2.0, round(rng.uniform(0, 3), 2)])
            run.append(f"{qid} Q0 {doc} {rank} {value} prefs{seed}")
    return "\n".join(prefs) + "\n", "\n".join(jg) + "\n", "\n".join(run) + "\n"


# --------------------------------------------------------------------------- cases

def fixture_cases(files: dict) -> list[tuple[str, list[str]]]:
    def ref(path: str) -> str:
        name = path.replace("/", "__")
        files[name] = {"fixture": path, "sha256": sha256(ROOT / path)}
        return name

    cases = []
    cli_q, run_a, run_b = (ref("fixtures/cli/qrels.txt"), ref("fixtures/cli/run_a.txt"),
                           ref("fixtures/cli/run_b.txt"))
    ex_q, ex_r = ref("fixtures/example/qrels.txt"), ref("fixtures/example/run.txt")
    for run in (run_a, run_b):
        for i, args in enumerate(VARIANTS[:-1]):
            cases.append((f"cli-{run[-9:-4]}-{i}", args + [cli_q, run]))
    for i, args in enumerate(VARIANTS[:-1]):
        cases.append((f"example-{i}", args + [ex_q, ex_r]))
    cmp_q = ref("fixtures/compare/qrels.txt")
    for name in ("bm25", "dense", "tweak"):
        run = ref(f"fixtures/compare/{name}.run")
        cases.append((f"compare-{name}-all_trec", ["-m", "all_trec", cmp_q, run]))
        cases.append((f"compare-{name}-c-J-l2", ["-c", "-J", "-l2", "-m", "all_trec",
                                                 cmp_q, run]))
        cases.append((f"compare-{name}-q", ["-q", "-m", "map", "-m", "ndcg_cut.10", cmp_q,
                                            run]))
    for judge in ("human", "llm"):
        qrels = ref(f"fixtures/meta_evaluation/qrels.{judge}.txt")
        for name in ("bm25", "dense", "rerank", "rm3", "splade", "weak"):
            run = ref(f"fixtures/meta_evaluation/{name}.run")
            cases.append((f"meta-{judge}-{name}", ["-m", "all_trec", qrels, run]))
            cases.append((f"meta-{judge}-{name}-M10-l2", ["-c", "-M10", "-l2", "-m",
                                                          "official", qrels, run]))
    return cases


def all_cases(seeds: int, prefs_seeds: int) -> tuple[dict, list[tuple[str, list[str]]]]:
    files: dict = {}
    cases = fixture_cases(files)
    for seed in range(seeds):
        qrels, run, z = generated_pair(seed)
        names = {"qrels": f"g{seed:03d}.qrels", "run": f"g{seed:03d}.run",
                 "z": f"g{seed:03d}.z"}
        files[names["qrels"]], files[names["run"]] = qrels, run
        for i, variant in enumerate(VARIANTS):
            args = [names["z"] if a == "{Z}" else a for a in variant]
            if "-Z" in args:
                files[names["z"]] = z
            cases.append((f"gen{seed:03d}-{i}", args + [names["qrels"], names["run"]]))
    for seed in range(prefs_seeds):
        prefs, jg, run = generated_prefs(seed)
        p, j, r = f"p{seed:03d}.prefs", f"p{seed:03d}.jg", f"p{seed:03d}.run"
        files[p], files[j], files[r] = prefs, jg, run
        cases.append((f"prefs{seed:03d}", ["-q", "-R", "prefs", "-m", "all_prefs", p, r]))
        cases.append((f"prefs{seed:03d}-off", ["-R", "prefs", "-m", "prefs", p, r]))
        cases.append((f"qrels_prefs{seed:03d}", ["-q", "-R", "qrels_prefs", "-m",
                                                 "all_prefs", j, r]))
        cases.append((f"qrels_jg{seed:03d}", ["-q", "-R", "qrels_jg", "-m", "qrels_jg",
                                              j, r]))
    return files, cases


def materialise(files: dict, where: Path) -> None:
    for name, content in files.items():
        if isinstance(content, dict):
            shutil.copyfile(ROOT / content["fixture"], where / name)
        else:
            (where / name).write_text(content)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trec-eval", required=True, type=Path, help="the built binary")
    parser.add_argument("--source", required=True, type=Path,
                        help="the trec_eval git checkout the binary was built from")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--prefs-seeds", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    binary = args.trec_eval.resolve()
    commit = subprocess.run(["git", "-C", str(args.source), "rev-parse", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    if not commit:
        commit = os.environ.get("TREC_EVAL_COMMIT", "")
    if len(commit) != 40:
        parser.error("cannot tell the source tree's commit: pass a git checkout, or set "
                     "TREC_EVAL_COMMIT to the 40-hex commit it was exported from")
    version = subprocess.run([str(binary), "-v"], capture_output=True, text=True)
    files, cases = all_cases(args.seeds, args.prefs_seeds)
    recorded = []
    with tempfile.TemporaryDirectory() as tmp:
        materialise(files, Path(tmp))
        for name, case_args in cases:
            done = subprocess.run([str(binary), *case_args], cwd=tmp, capture_output=True)
            # exit 4: a qrels query the run lacks, without -c (trec_eval 10 stops there;
            # irmetrics skips it with a warning, docs/semantics.md)
            if done.returncode not in (0, 4):
                raise SystemExit(f"{name}: trec_eval {' '.join(case_args)} failed:\n"
                                 f"{done.stderr.decode(errors='replace')}")
            recorded.append({"name": name, "args": case_args, "status": done.returncode,
                             "stdout": done.stdout.decode("ascii")})
    golden = {"trec_eval": {"repository": REPOSITORY, "commit": commit,
                            "version": (version.stdout + version.stderr).strip()},
              "files": files, "cases": recorded}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(golden, indent=1) + "\n")
    size = args.out.stat().st_size
    print(f"wrote {len(recorded)} cases to {args.out} ({size / 2**20:.2f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
