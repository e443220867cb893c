#!/usr/bin/env python
"""``irmetrics.fusion.fuse`` of this checkout against another tree's, byte for byte.

    python benchmarks/check_fusion_roads.py --base /path/to/main/tree [--examples 2000]
        [--new PATH] [--zero-signs strict|loose] [--plant]

A review tool for fusion's fast roads, not a test: hypothesis draws inputs, each is fused
by the base tree (``--base``: a plain tree of the reference commit, e.g. ``git archive
main``) and by this one (``--new``, default this checkout) in two worker processes that
stay up, and the fused runs are compared: rows (scores as the floats' hex), run name,
and the written TREC bytes; an error must be the same class and message.

Inputs: every method (trained ones with qrels) x every normalisation and None, 2-5 runs
given as dicts, frames, Run tables or TREC files (``{name: run}`` or a list), rows in
trec_eval's order, ties in any order, ascending, shuffled, a query block cut in two,
queries interleaved; dense ties, -0.0 next to 0.0, floats a few ulps apart, 1e300;
queries in one run only, empty runs, one-document queries; doc ids that are prefixes,
unicode, 300 characters, equal but for case or whitespace, numeric-looking.

Each input is fused by the new tree under several roads, all of which must give the
base tree's bytes: ``IRMETRICS_THREADS`` 1 or 4; spans of a few entries
(``lists.BLOCK_ENTRIES``); the first doc-id hash (``lists.doc_hash``) replaced by a
constant, by two values, by its low 16 bits (top bits all equal), by one value per id
length; ``hash_bits`` 0-4 and 64-bit pair keys (``lists.NARROW_BITS``); the fingerprint
made constant (alone it changes nothing). ``--plant`` adds the one road that must
differ, both hashes constant, to show that a difference is caught.

``--zero-signs loose`` compares -0.0 and 0.0 as one score (for a base from before the
fix that keeps a -0.0 with its document: there a tie moved a zero's sign to another
document, so the two differ wherever -0.0 ties 0.0).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import pickle
import random
import re
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def read_msg(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))


def write_msg(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)))
    stream.write(data)
    stream.flush()


# ---- worker: fuses with the irmetrics on its PYTHONPATH ---------------------------------

def worker() -> None:
    import numpy as np
    import polars as pl

    from irmetrics import Qrels, Run
    from irmetrics.fusion import fuse
    from irmetrics.fusion import lists as L
    from irmetrics.io import write_run

    tmp = tempfile.mkdtemp(prefix="fusion_roads_")

    def make_run(spec, i):
        rows, kind = spec["rows"], spec["kind"]
        if kind == "dict":
            out: dict = {}
            for q, d, s in rows:
                out.setdefault(q, {}).setdefault(d, s)
            return out
        frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                           "score": pl.Float64}, orient="row")
        if kind == "frame":
            return frame
        if kind == "run":
            return Run.from_df(frame, name=f"R{i}")
        path = os.path.join(tmp, f"{i}.run")
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(f"{q} Q0 {d} {k + 1} {s!r} sys{i}\n" for k, (q, d, s) in enumerate(rows))
        return path

    def first_hash(mode, real):
        def fake(ids):
            h = real(ids)
            if mode == "const":
                return np.full(len(h), np.uint64(0xDEADBEEF12345678))
            if mode == "two":
                return np.where(h & np.uint64(1), np.uint64(2**63 + 1), np.uint64(7))
            if mode == "low16":
                return h & np.uint64(0xFFFF)
            return ids.str.len_bytes().cast(pl.UInt64).to_numpy() * np.uint64(0x9E3779B97F4A7C15)
        return fake

    def patched(stack, patch):
        kind, value = patch
        if kind == "hash":
            stack.enter_context(_attr(L, "doc_hash", first_hash(value, L.doc_hash)))
        elif kind == "fingerprint":
            stack.enter_context(_attr(L, "doc_fingerprint",
                                      lambda ids: np.zeros(len(ids), dtype=np.uint64)))
        elif kind == "hash_bits":
            stack.enter_context(_attr(L, "pair_codes",
                                      functools.partial(L.pair_codes, hash_bits=value)))
        else:  # BLOCK_ENTRIES, NARROW_BITS: module constants
            stack.enter_context(_attr(L, kind, value))

    def one(case):
        os.environ["IRMETRICS_THREADS"] = str(case["threads"])
        runs = [make_run(spec, i) for i, spec in enumerate(case["runs"])]
        if case["mapping"]:
            runs = {f"n{i}": r for i, r in enumerate(runs)}
        qrels = None if case["qrels"] is None else Qrels.from_df(pl.DataFrame(
            case["qrels"], schema={"query_id": pl.String, "doc_id": pl.String,
                                   "relevance": pl.Int64}, orient="row"))
        with contextlib.ExitStack() as stack:
            for patch in case["patches"]:
                patched(stack, patch)
            try:
                fused = fuse(runs, case["method"], norm=case["norm"], weights=case["weights"],
                             qrels=qrels, name=case["name"], **case["params"])
            except Exception as error:  # compared: the same refusal
                return "error", type(error).__name__, str(error).replace(tmp, "<TMP>")
        rows = [(q, i, d, r, float(s).hex(), n) for q, i, d, r, s, n in fused.df.iter_rows()]
        path = os.path.join(tmp, "fused.run")
        try:
            write_run(fused, path)
            written = Path(path).read_bytes()
        except Exception as error:  # ids with whitespace cannot be written
            written = type(error).__name__
        return "ok", fused.name, rows, written

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (case := read_msg(stdin)) is not None:
        write_msg(stdout, one(case))


@contextlib.contextmanager
def _attr(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


# ---- driver ---------------------------------------------------------------------------

SAFE_DOCS = ["d1", "d2", "d10", "d100", "d", "D1", "D2", "a", "ab", "abc", "b", "1", "01",
             "1.0", "10", "2", "1e3", "-1", "é", "e\u0301", "日本", "x" * 300 + "a",
             "x" * 300 + "b", "x" * 299, "zz", "Z", "été", "d_1", "d-1", "\U0001F600", "ß", "SS"]
SPACED_DOCS = ["d1 ", " d1", "d 1", "\td1", ""]  # not in files: whitespace ends a field
QUERIES = ["q1", "q2", "q10", "Q1", "1", "01", "qé", "q" * 60, "q3", "q4"]
WEIGHTED = {"wsum", "wmnz", "mixed", "weighted_bordafuse", "weighted_condorcet"}
TRAINED = {"posfuse", "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse"}
PARAMS = {"rrf": ("k", [0, 1.5, 60]), "rbc": ("phi", [0.5, 0.9, 0.1]),
          "gmnz": ("gamma", [0.5, 2.0, -1.0]), "logn_isr": ("sigma", [0.0, 0.5, 1.0]),
          "probfuse": ("n_segments", [1, 2, 3, 4]), "slidefuse": ("w", [0, 1, 2, 3])}


class Worker:
    def __init__(self, tree: str):
        env = dict(os.environ, PYTHONPATH=str(tree), POLARS_MAX_THREADS="2")
        self.process = subprocess.Popen([sys.executable, __file__, "--worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def __call__(self, case):
        write_msg(self.process.stdin, case)
        return read_msg(self.process.stdout)


def strategies(methods, norms):
    from hypothesis import strategies as st

    @st.composite
    def run_rows(draw, queries, docs, deep):
        scores = draw(st.sampled_from(["ties", "floats", "near", "big"]))
        value = {"ties": st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5, -1.0]),
                 "floats": st.floats(-1e3, 1e3, allow_nan=False),
                 "near": st.integers(-3, 3).map(lambda k: 1.0 + k * 2.0**-52),
                 "big": st.sampled_from([1e300, -1e300, 1e-300, 5e-324, 1.0])}[scores]
        rnd = random.Random(draw(st.integers(0, 2**32)))
        order = draw(st.sampled_from(["trec_eval", "ties_any", "ascending", "shuffled",
                                      "split", "interleaved", "blocks_unsorted"]))
        blocks = []
        for q in draw(st.permutations(queries))[:draw(st.integers(0, len(queries)))]:
            ds = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=40 if deep else 8,
                               unique=True))
            ds += [f"g{k}" for k in range(draw(st.integers(0, 60)) if deep else 0)]
            entries = [(d, draw(value)) for d in ds]
            if order in ("trec_eval", "split"):  # score descending, doc id descending
                entries.sort(key=lambda e: (-e[1], [-b for b in e[0].encode()]))
            elif order == "ties_any":
                rnd.shuffle(entries)
                entries.sort(key=lambda e: -e[1])
            elif order == "ascending":
                entries.sort(key=lambda e: e[1])
            elif order == "blocks_unsorted":
                rnd.shuffle(entries)
            blocks.append([(q, d, s) for d, s in entries])
        rows = [row for block in blocks for row in block]
        if order == "shuffled":
            rnd.shuffle(rows)
        elif order == "split" and len(rows) > 2:  # a block cut in two places, moved
            i, j = sorted(rnd.sample(range(1, len(rows)), 2))
            rows = rows[i:j] + rows[:i] + rows[j:]
        elif order == "interleaved":
            rows = [block[k] for k in range(max(map(len, blocks), default=0))
                    for block in blocks if k < len(block)]
        return rows

    @st.composite
    def cases(draw):
        method, norm = draw(st.sampled_from(methods)), draw(st.sampled_from(norms))
        kinds = draw(st.lists(st.sampled_from(["dict", "frame", "file", "run"]), min_size=2,
                              max_size=5))
        docs = SAFE_DOCS + (SPACED_DOCS if "file" not in kinds and draw(st.booleans()) else [])
        queries = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=5, unique=True))
        deep = draw(st.integers(0, 5)) == 0
        runs = [{"rows": draw(run_rows(queries, docs, deep)), "kind": k} for k in kinds]
        weights = [draw(st.sampled_from([1.0, 0.5, 2.0, 0.0, -1.0, 0.3])) for _ in kinds] \
            if method in WEIGHTED and draw(st.integers(0, 4)) else None
        params = {}
        if method in PARAMS and (method not in ("rrf", "logn_isr") or draw(st.booleans())):
            key, values = PARAMS[method]
            params[key] = draw(st.sampled_from(values))
        qrels = None
        if method in TRAINED:
            pool = sorted({(q, d) for run in runs for q, d, _ in run["rows"]})
            picked = draw(st.lists(st.sampled_from(pool), unique=True, max_size=30)) if pool else []
            qrels = [(q, d, draw(st.integers(0, 2))) for q, d in picked] or [(queries[0], "d1", 1)]
        return {"method": method, "norm": norm, "runs": runs, "mapping": draw(st.booleans()),
                "weights": weights, "params": params, "qrels": qrels,
                "name": draw(st.sampled_from([None, None, "x", "my run", "é"]))}

    @st.composite
    def roads(draw, plant):
        out = []
        for _ in range(draw(st.integers(2, 4))):
            patches = [("BLOCK_ENTRIES", draw(st.integers(1, 40)))] if draw(st.booleans()) else []
            pick = draw(st.sampled_from(["none", "hash", "hash_bits", "narrow", "fingerprint"]))
            if pick == "hash":
                patches.append(("hash", draw(st.sampled_from(["const", "two", "low16", "len"]))))
            elif pick == "hash_bits":
                patches.append(("hash_bits", draw(st.integers(0, 4))))
            elif pick == "narrow":
                patches.append(("NARROW_BITS", draw(st.sampled_from([11, 12, 13, 15, 20]))))
            elif pick == "fingerprint":
                patches.append(("fingerprint", None))
            if plant and draw(st.booleans()):
                patches = [("hash", "const"), ("fingerprint", None)]
            out.append((patches, draw(st.sampled_from([1, 4]))))
        return out

    return cases(), roads


def loose(result):
    """-0.0 read as 0.0 in rows and written bytes."""
    if result[0] != "ok":
        return result
    kind, name, rows, written = result
    rows = [row[:4] + ("0x0.0p+0" if row[4] == "-0x0.0p+0" else row[4],) + row[5:]
            for row in rows]
    if isinstance(written, bytes):
        written = re.sub(rb"^(\S+ \S+ \S+ \S+) -0\.0 ", rb"\1 0.0 ", written, flags=re.M)
    return kind, name, rows, written


def main() -> None:
    if "--worker" in sys.argv:
        worker()
        return
    from hypothesis import HealthCheck, Phase, given, note, settings
    from hypothesis import strategies as st

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the reference tree (a plain checkout)")
    ap.add_argument("--new", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--examples", type=int, default=500)
    ap.add_argument("--zero-signs", choices=["strict", "loose"], default="strict")
    ap.add_argument("--plant", action="store_true", help="add the road that must differ")
    args = ap.parse_args()
    sys.path.insert(0, args.new)
    from irmetrics.fusion import METHODS, NORMS

    base, new = Worker(args.base), Worker(args.new)
    same = loose if args.zero_signs == "loose" else (lambda result: result)
    cases, roads = strategies(sorted(METHODS), [*NORMS, None])
    count = {"inputs": 0, "fusions": 0, "refused": 0}

    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
    @given(cases, roads(args.plant), st.integers(1, 40), st.sampled_from([1, 4]))
    def check(case, variants, base_entries, base_threads):
        count["inputs"] += 1
        expected = same(base(dict(case, threads=base_threads, patches=[
            ("BLOCK_ENTRIES", base_entries)] if base_entries < 40 else [])))
        count["refused"] += expected[0] == "error"
        for patches, threads in [([], 1), *variants]:
            count["fusions"] += 1
            note(f"road {patches}, threads={threads}")
            assert same(new(dict(case, threads=threads, patches=patches))) == expected

    start = time.time()
    check()
    print(f"same bytes: {count} in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
