#!/usr/bin/env python
"""Deterministic synthetic TREC qrels + run generator for the irmetrics benchmarks.

    python benchmarks/generate.py --seed 42 --queries 7000 --depth 1000 --out benchmarks/data/

writes ``qrels.txt`` (``qid 0 docid rel``), ``run.txt`` (``qid Q0 docid rank score runname``)
and ``meta.json`` (parameters, line counts, sizes).  The output depends only on
``--seed --queries --depth --collection`` and is identical byte for byte across runs
(and machines: only integer arithmetic and numpy's PCG64 streams feed the text).

Shape of the data (for ``--queries 7000``):

* 7,000 qrels topics; ~20 of them have no run lines at all, and ~5 extra run topics have
  no qrels.  Topic ids are sparse integers (varied width), files are sorted by qid.
* each run topic retrieves ``--depth`` docs, except ~4% that retrieve fewer
  (log-uniform in [1, depth)).  Docs come from a ~2M-doc collection with ClueWeb-like ids of
  varied length (``clueweb22-en0003-12-45217``, ``clueweb22-ptbr0006-07-981``), drawn with
  a popularity skew, never duplicated within a topic.
* scores are fixed-point with 2 or 3 decimals (per topic), many ties from rounding plus
  runs of identical scores and, for ~10% of topics, a long flat tail; ~10% of topics have
  negative scores.  Lines are sorted by qid, then score descending.  The rank column does
  NOT always match the line order (0-based for ~10% of topics, reversed for ~5%): evaluators
  must ignore it, as trec_eval does.
* qrels: 150-400 judgments per topic, graded 0-3 plus ~0.5% ``-1`` labels; roughly half of
  the judged docs (biased towards top ranks, like pooling) are also retrieved.  A handful
  of topics have no relevant doc at all.  Qrels are sorted by qid, then collection order.

Generation is vectorised numpy and text is built with polars; topics are produced in fixed
blocks of ``BLOCK`` topics (each with its own seeded RNG stream) and appended to the files,
so memory stays bounded for the 100M-line scaling file and the bytes do not depend on
how much memory the machine has.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

GENERATOR_VERSION = 1
BLOCK = 1000  # topics per block; part of the format: changing it changes the bytes
RUN_NAME = "irmbench"
LANGS = ["en", "de", "es", "fr", "ja", "zh", "ptbr", "ko"]


# --------------------------------------------------------------------------- collection
def collection_ids(n: int) -> pl.Series:
    """``n`` unique, ClueWeb-like doc ids of varied length (index i -> one id)."""
    i = pl.col("i")
    seg = i // 100_000
    dirn = (i // 1000) % 100
    # unique inside (seg, dir): i % 1000 is recoverable because the offset only depends
    # on i // 1000.  Not zero-padded, so ids vary in length.
    num = (i % 1000) * 97 + (i // 1000) % 97
    lang = (seg % len(LANGS)).replace_strict(dict(enumerate(LANGS)), return_dtype=pl.String)
    expr = pl.concat_str(
        [
            pl.lit("clueweb22-"),
            lang,
            seg.cast(pl.String).str.zfill(4),
            pl.lit("-"),
            dirn.cast(pl.String).str.zfill(2),
            pl.lit("-"),
            num.cast(pl.String),
        ]
    )
    return pl.DataFrame({"i": np.arange(n, dtype=np.int64)}).select(expr.alias("docid"))["docid"]


# --------------------------------------------------------------------------- topics
def plan_topics(seed: int, queries: int, depth: int) -> dict[str, np.ndarray]:
    """Global per-topic decisions (cheap arrays of size ~queries), sorted by qid."""
    rng = np.random.default_rng([seed, 0])
    n_missing = round(queries * 20 / 7000) if queries >= 10 else 0
    n_extra = max(1, round(queries * 5 / 7000))
    total = queries + n_extra
    qid = np.sort(rng.choice(20 * total, size=total, replace=False)).astype(np.int64) + 1

    in_qrels = np.ones(total, dtype=bool)
    in_qrels[rng.choice(total, size=n_extra, replace=False)] = False
    judged_topics = np.flatnonzero(in_qrels)
    in_run = np.ones(total, dtype=bool)
    in_run[rng.choice(judged_topics, size=n_missing, replace=False)] = False

    D = np.full(total, depth, dtype=np.int64)
    short = rng.random(total) < 0.04
    D[short] = np.minimum(
        np.exp(rng.uniform(0.0, np.log(depth), total)).astype(np.int64), depth - 1
    ).clip(1)[short]
    D[~in_run] = 0

    J = rng.integers(150, 401, size=total).astype(np.int64)
    J[~in_qrels] = 0

    norel = np.zeros(total, dtype=bool)
    both = np.flatnonzero(in_qrels & in_run)
    norel[rng.choice(both, size=max(1, round(queries / 1000)), replace=False)] = True
    return {"qid": qid, "D": D, "J": J, "norel": norel,
            "n_missing": n_missing, "n_extra": n_extra}


def _draw_docs(rng: np.random.Generator, qi: np.ndarray, coll_n: int) -> np.ndarray:
    """Skewed doc draws, redrawn until no doc repeats inside a topic."""
    docs = (coll_n * rng.random(qi.size) ** 2).astype(np.int64)
    while True:
        key = qi * coll_n + docs
        order = np.argsort(key, kind="stable")
        sk = key[order]
        dup = order[np.flatnonzero(sk[1:] == sk[:-1]) + 1]
        if dup.size == 0:
            return docs
        docs[dup] = (coll_n * rng.random(dup.size) ** 2).astype(np.int64)


def _segment_pos(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(segment index, position inside segment) for consecutive segments of ``counts``."""
    seg = np.repeat(np.arange(counts.size), counts)
    starts = np.cumsum(counts) - counts
    return seg, np.arange(seg.size, dtype=np.int64) - np.repeat(starts, counts)


def gen_block(rng: np.random.Generator, D: np.ndarray, J: np.ndarray, norel: np.ndarray,
              coll_n: int):
    """One block of topics -> (run arrays, qrels arrays), topic indices local to the block."""
    nb = D.size
    k = np.minimum(np.rint(J * rng.uniform(0.35, 0.65, nb)).astype(np.int64), D)
    U = J - k                                   # judged but not retrieved
    qi, pos = _segment_pos(D + U)
    docs = _draw_docs(rng, qi, coll_n)
    ret = pos < D[qi]

    # ---- run: scores as fixed-point integers, non-increasing inside each topic
    rq, rpos, rdoc = qi[ret], pos[ret], docs[ret]
    dec = np.where(rng.random(nb) < 0.6, 2, 3)
    mean_step = np.where(dec == 2, rng.uniform(0.5, 3.0, nb), rng.uniform(5.0, 30.0, nb))
    tie_p = rng.uniform(0.15, 0.6, nb)
    plateau = np.where(rng.random(nb) < 0.10,
                       np.rint(rng.uniform(0.3, 0.9, nb) * D).astype(np.int64), D + 1)
    step = np.ceil(rng.exponential(1.0, rq.size) * mean_step[rq]).astype(np.int64)
    step[(rng.random(rq.size) < tie_p[rq]) | (rpos >= plateau[rq]) | (rpos == 0)] = 0
    cs = np.cumsum(step)
    # per-topic sums of steps; step is 0 at each topic's first row, so cs there is the
    # running total of all previous topics
    has = D > 0
    first = (np.cumsum(D) - D)[has]
    before = np.zeros(nb, dtype=np.int64)
    qtotal = np.zeros(nb, dtype=np.int64)
    before[has] = cs[first]
    qtotal[has] = cs[first + D[has] - 1] - cs[first]
    offset = (rng.uniform(0.0, 5.0, nb) * np.where(dec == 2, 100, 1000)).astype(np.int64)
    offset[plateau <= D] *= rng.random(nb)[plateau <= D] < 0.5   # some flat tails at 0.00
    neg = rng.random(nb) < 0.10
    shift = np.where(neg, qtotal + offset + rng.integers(0, 2000, nb), 0)
    score = offset[rq] + qtotal[rq] - (cs - before[rq]) - shift[rq]

    rank_mode = rng.choice(3, size=nb, p=[0.85, 0.10, 0.05])
    rank = np.where(rank_mode[rq] == 0, rpos + 1, np.where(rank_mode[rq] == 1, rpos, D[rq] - rpos))

    # ---- qrels: k retrieved docs per topic (weighted towards the top, like pooling)
    key = np.log1p(-rng.random(rq.size)) * (rpos + 20.0)     # log(u), u in (0, 1]
    order = np.argsort(rq * 1e6 - key, kind="stable")      # by topic, then key descending
    _, r_in_q = _segment_pos(D)
    pick = order[r_in_q < k[rq[order]]]
    jq = np.concatenate([rq[pick], qi[~ret]])
    jdoc = np.concatenate([rdoc[pick], docs[~ret]])
    p_rel = np.concatenate([0.05 + 0.6 * np.exp(-rpos[pick] / 150.0),
                            np.full(int((~ret).sum()), 0.08)])
    g = rng.random(jq.size)
    rel = (rng.random(jq.size) < p_rel) * (1 + (g > 0.6) + (g > 0.9)).astype(np.int64)
    rel[norel[jq]] = 0
    rel[rng.random(jq.size) < 0.005] = -1
    o = np.argsort(jq * coll_n + jdoc, kind="stable")
    run = {"q": rq, "doc": rdoc, "rank": rank, "score": score, "dec": dec[rq]}
    qrels = {"q": jq[o], "doc": jdoc[o], "rel": rel[o]}
    return run, qrels


# --------------------------------------------------------------------------- text
def _run_lines(run: dict, qid: np.ndarray, coll: pl.Series) -> pl.DataFrame:
    s, dec = pl.col("score"), pl.col("dec")
    unit = pl.when(dec == 2).then(pl.lit(100, pl.Int64)).otherwise(pl.lit(1000, pl.Int64))
    a = s.abs()
    score_str = pl.concat_str(
        [
            pl.when(s < 0).then(pl.lit("-")).otherwise(pl.lit("")),
            (a // unit).cast(pl.String),
            pl.lit("."),
            (a % unit).cast(pl.String).str.zfill(dec),
        ]
    )
    df = pl.DataFrame(
        {
            "qid": qid[run["q"]],
            "docid": coll.gather(run["doc"]),
            "rank": run["rank"],
            "score": run["score"],
            "dec": run["dec"],
        }
    )
    return df.select(
        pl.concat_str(
            [pl.col("qid").cast(pl.String), pl.lit("Q0"), pl.col("docid"),
             pl.col("rank").cast(pl.String), score_str, pl.lit(RUN_NAME)],
            separator=" ",
        )
    )


def _qrels_lines(qrels: dict, qid: np.ndarray, coll: pl.Series) -> pl.DataFrame:
    df = pl.DataFrame({"qid": qid[qrels["q"]], "docid": coll.gather(qrels["doc"]),
                       "rel": qrels["rel"]})
    return df.select(
        pl.concat_str([pl.col("qid").cast(pl.String), pl.lit("0"), pl.col("docid"),
                       pl.col("rel").cast(pl.String)], separator=" ")
    )


def _write(df: pl.DataFrame, fh) -> None:
    df.write_csv(fh, include_header=False, quote_style="never")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------- driver
def generate(out: str | Path, queries: int = 7000, depth: int = 1000, seed: int = 42,
             collection: int = 2_000_000, checksum: bool = False, verbose: bool = True) -> dict:
    """Write ``qrels.txt``, ``run.txt`` and ``meta.json`` into ``out``; return the metadata."""
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    coll = collection_ids(collection)
    plan = plan_topics(seed, queries, depth)
    qid = plan["qid"]
    run_lines = qrels_lines = 0
    qrels_path, run_path = out / "qrels.txt", out / "run.txt"
    tmp_q, tmp_r = out / "qrels.txt.tmp", out / "run.txt.tmp"
    def emit(run: dict, qrels: dict, q: np.ndarray) -> None:
        _write(_run_lines(run, q, coll), fr)
        _write(_qrels_lines(qrels, q, coll), fq)

    # numpy generation of block b+1 overlaps with polars formatting/writing of block b
    # (both release the GIL); one writer thread keeps the blocks in order.
    with open(tmp_q, "wb") as fq, open(tmp_r, "wb") as fr, \
            ThreadPoolExecutor(max_workers=1) as writer:
        pending = []
        for b, lo in enumerate(range(0, qid.size, BLOCK)):
            hi = min(lo + BLOCK, qid.size)
            rng = np.random.default_rng([seed, 1, b])
            run, qrels = gen_block(rng, plan["D"][lo:hi], plan["J"][lo:hi],
                                   plan["norel"][lo:hi], collection)
            run_lines += run["q"].size
            qrels_lines += qrels["q"].size
            if pending:                      # at most one block queued: bounded memory
                pending.pop().result()
            pending.append(writer.submit(emit, run, qrels, qid[lo:hi]))
        for f in pending:
            f.result()
    tmp_q.replace(qrels_path)   # only complete files get the final names
    tmp_r.replace(run_path)
    elapsed = time.perf_counter() - t0
    meta = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed, "queries": queries, "depth": depth, "collection": collection,
        "qrels_topics": int((plan["J"] > 0).sum()), "run_topics": int((plan["D"] > 0).sum()),
        "qrels_topics_missing_from_run": plan["n_missing"],
        "run_topics_missing_from_qrels": plan["n_extra"],
        "qrels_lines": qrels_lines, "run_lines": run_lines,
        "qrels_bytes": qrels_path.stat().st_size, "run_bytes": run_path.stat().st_size,
        "generation_seconds": round(elapsed, 3),
    }
    if checksum:
        meta["qrels_sha256"] = _sha256(qrels_path)
        meta["run_sha256"] = _sha256(run_path)
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    if verbose:
        mib = 1 << 20
        print(f"generated in {elapsed:.2f}s (seed={seed}, queries={queries}, depth={depth}, "
              f"collection={collection})")
        print(f"  {qrels_path}: {qrels_lines:,} lines, {meta['qrels_bytes'] / mib:,.1f} MiB "
              f"({meta['qrels_topics']:,} topics)")
        print(f"  {run_path}: {run_lines:,} lines, {meta['run_bytes'] / mib:,.1f} MiB "
              f"({meta['run_topics']:,} topics; {plan['n_missing']} qrels topics absent, "
              f"{plan['n_extra']} run topics without qrels)")
        if checksum:
            print(f"  sha256 qrels {meta['qrels_sha256']}\n  sha256 run   {meta['run_sha256']}")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--queries", type=int, default=7000, help="number of qrels topics")
    ap.add_argument("--depth", type=int, default=1000, help="docs retrieved per run topic")
    ap.add_argument("--collection", type=int, default=2_000_000, help="collection size")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "data"))
    ap.add_argument("--checksum", action="store_true", help="also record sha256 of the files")
    a = ap.parse_args(argv)
    if a.depth < 2 or a.queries < 1 or a.collection < 10 * a.depth:
        ap.error("need depth >= 2, queries >= 1, collection >= 10 * depth")
    generate(a.out, a.queries, a.depth, a.seed, a.collection, checksum=a.checksum)
    return 0


if __name__ == "__main__":
    sys.exit(main())
