"""Rank intervals and run similarity: coverage by simulation and speed (seeded).

python benchmarks/bench_rank_intervals.py [--leaderboards 1000] [--skip-speed]
python benchmarks/bench_rank_intervals.py --similarity [--depths 100,1000] [--repeats 3]
python benchmarks/bench_rank_intervals.py --typed 1000

Coverage: simulated leaderboards with known true ranks (distinct true means); a
leaderboard counts as covered when every system's true rank lies in its interval at once.
* one collection: 10 systems, 50 topics, topic and system-topic effects, 1,000 resamples;
* many tasks: 6 systems, 12 tasks of 40-80 topics, a task-by-system effect (systems do
  better on some tasks), 500 resamples, under the two-level, task and topic bootstraps
  (the population target is the mean over tasks: only resampling tasks can cover it).
Speed: 50 systems x 50 tasks x 100 topics with 2,000 two-level resamples; RBO (all forms,
ties "a") plus Jaccard/overlap/recall on 10,000 query pairs of 100 and of 1,000 documents,
from CSR arrays. Timings are wall seconds of one call in this process.

--similarity: the figure of issue 38's "10,000-query run pairs in under 1 s": two runs of
10,000 queries (a rerun: the second run's scores are the first's plus noise, rounded to
three decimals so there are ties) at each depth, compared by ``run_similarity`` with its
defaults (RBO every form, tau-b, tau_AP, Jaccard/overlap/recall at 10, 1,000 bootstrap
resamples) from in-memory polars frames, and by ``irmetrics similarity a.run b.run`` in a
fresh process (reading both TREC files included). Medians of ``--repeats`` runs, each
with the 1-minute load average before it (the machine is shared).

--reference DIR (the folder of Corsi & Urbano's rbo.py, fetched by you, never shipped):
time their script (one call per query pair) against rbo_rankings on the same 300 tied
pairs, alternating the two three times: the ratio holds on a loaded machine where the
absolute seconds do not.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from irmetrics.exceptions import DegenerateTestWarning
from irmetrics.stats.rank_intervals import aggregate_rank_intervals, rank_intervals
from irmetrics.stats.similarity import overlap_at_k, rankings, rbo_rankings


def one_collection(rng, m=10, n=50):
    true = np.sort(rng.uniform(0.2, 0.6, m))[::-1]
    return true + rng.normal(0, 0.15, (n, 1)) + rng.normal(0, 0.1, (n, m))


def many_tasks(rng, m=6, n_tasks=12):
    true = np.linspace(0.55, 0.45, m)
    tasks = []
    for _ in range(n_tasks):
        n = int(rng.integers(40, 81))
        effect = rng.normal(0, 0.08, m)
        tasks.append(true + effect + rng.normal(0, 0.1, (n, 1)) + rng.normal(0, 0.05, (n, m)))
    return tasks


def coverage(count: int) -> None:
    rng = np.random.default_rng(2026)
    true = np.arange(1, 11)
    hits = widths = 0
    for i in range(count):
        r = rank_intervals(one_collection(rng), n_resamples=1000, seed=i, threads=1)
        hits += np.all((r.low <= true) & (true <= r.high))
        widths += np.mean(r.high - r.low + 1)
    print(f"one collection: coverage {hits / count:.3f} over {count} leaderboards "
          f"(nominal 0.95), mean interval length {widths / count:.2f} ranks of 10")
    rng = np.random.default_rng(2027)
    true = np.arange(1, 7)
    hits = {"two-level": 0, "tasks": 0, "topics": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        for i in range(count):
            tasks = many_tasks(rng)
            for level in hits:
                r = aggregate_rank_intervals(tasks, resampling=level, n_resamples=500, seed=i,
                                             threads=1)
                hits[level] += np.all((r.low <= true) & (true <= r.high))
    print("many tasks: coverage " + ", ".join(f"{k} {v / count:.3f}" for k, v in hits.items())
          + f" over {count} benchmarks (nominal 0.95)")


def typed_coverage(count: int) -> None:
    """Coverage of the type-mean intervals (MTEB's Mean (TaskType)): 6 systems, three
    task types of 2, 4 and 8 tasks (40 to 80 topics each), systems better on some types
    and on some tasks; the target is the mean over types of each type's population
    mean, so the type-stratified task bootstrap (two-level) should cover it."""
    rng = np.random.default_rng(2028)
    true = np.arange(1, 7)
    base = np.linspace(0.55, 0.45, 6)
    sizes = (2, 4, 8)
    types = [g for g, size in enumerate(sizes) for _ in range(size)]
    hits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateTestWarning)
        for i in range(count):
            # type effects sum to zero over types per system: the true type mean is base
            effects = rng.normal(0, 0.03, (len(sizes), 6))
            effects -= effects.mean(axis=0)
            tasks = []
            for g in types:
                n = int(rng.integers(40, 81))
                task_effect = rng.normal(0, 0.06, 6)
                tasks.append(base + effects[g] + task_effect + rng.normal(0, 0.1, (n, 1))
                             + rng.normal(0, 0.05, (n, 6)))
            r = aggregate_rank_intervals(tasks, aggregation="type_mean", task_types=types,
                                         n_resamples=500, seed=i, threads=1)
            hits += np.all((r.low <= true) & (true <= r.high))
    print(f"type means (2, 4, 8 tasks per type): coverage {hits / count:.3f} over {count}"
          " benchmarks (nominal 0.95), two-level bootstrap stratified by type")


def speed() -> None:
    rng = np.random.default_rng(0)
    tasks = [rng.random((100, 50)) for _ in range(50)]
    for threads in (1, 2):
        start = time.perf_counter()
        aggregate_rank_intervals(tasks, n_resamples=2000, threads=threads)
        print(f"50 systems x 50 tasks x 100 topics, 2,000 two-level resamples, threads={threads}:"
              f" {time.perf_counter() - start:.2f} s")
    for depth in (100, 1000):
        q = 10_000
        a = np.argsort(rng.random((q, depth + depth // 2)), axis=1)[:, :depth]
        b = np.argsort(rng.random((q, depth + depth // 2)), axis=1)[:, :depth]
        offsets = np.arange(q + 1) * depth
        scores = -np.tile(np.arange(depth, dtype=np.float64), q) // 3  # tie groups of 3
        start = time.perf_counter()
        x = rankings(a.ravel(), offsets, scores)
        y = rankings(b.ravel(), offsets, scores)
        rbo_rankings(x, y, p=0.9)
        overlap_at_k(x, y, 10)
        print(f"RBO + sets at 10, 10,000 query pairs of {depth} documents (ties of 3):"
              f" {time.perf_counter() - start:.2f} s")


def similarity_runs(depth: int, q: int = 10_000, seed: int = 0):
    """Two runs of ``q`` queries x ``depth`` documents as polars frames: a rerun."""
    import polars as pl

    rng = np.random.default_rng(seed)
    pool = depth + depth // 5
    docs = np.argsort(rng.random((q, pool)), axis=1)
    first = np.round(rng.random((q, pool)), 3)
    second = np.round(first + rng.normal(0, 0.05, (q, pool)), 3)
    frames = []
    for scores in (first, second):
        order = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
        frames.append(pl.DataFrame({
            "query_id": pl.Series(np.repeat(np.arange(q), depth)).cast(pl.String),
            "doc_id": pl.Series(np.take_along_axis(docs, order, 1).ravel()).cast(pl.String)
            .str.replace(r"^", "d"),
            "score": np.take_along_axis(scores, order, 1).ravel()}))
    return frames


def similarity_speed(depths, repeats: int) -> None:
    import os
    import statistics
    import subprocess
    import sys
    import tempfile

    import polars as pl

    from irmetrics.similarity import run_similarity

    for depth in depths:
        a, b = similarity_runs(depth)
        memory, cli, loads = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, frame in (("a", a), ("b", b)):
                path = os.path.join(tmp, f"{name}.run")
                frame.select("query_id", pl.lit("Q0").alias("q0"), "doc_id",
                             (pl.int_range(pl.len()).over("query_id") + 1).alias("rank"),
                             "score", pl.lit(name).alias("tag")).write_csv(path, separator=" ", include_header=False)
                paths.append(path)
            for _ in range(repeats):  # in memory and through the CLI, alternated
                loads.append(os.getloadavg()[0])
                start, cpu = time.perf_counter(), time.process_time()
                run_similarity(a, b)
                memory.append((time.perf_counter() - start, time.process_time() - cpu))
                start, cpu = time.perf_counter(), _children_cpu()
                subprocess.run([sys.executable, "-m", "irmetrics", "similarity", *paths],
                               check=True, stdout=subprocess.DEVNULL)
                cli.append((time.perf_counter() - start, _children_cpu() - cpu))

        def said(times):
            wall, cpu = zip(*times)
            return (f"median {statistics.median(wall):.2f} s wall {[round(t, 2) for t in wall]},"
                    f" {statistics.median(cpu):.2f} s CPU")

        print(f"similarity, 10,000 query pairs x {depth} documents (ties; RBO, tau-b, tau_AP,"
              f" sets at 10, 1,000 resamples): in memory {said(memory)}; irmetrics similarity"
              f" a.run b.run (fresh process) {said(cli)}; load averages"
              f" {[round(x, 1) for x in loads]} on {os.cpu_count()} cores (CPU seconds: all"
              " threads of the process, what an idle machine's wall time is near)")


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def against_reference(folder: str, pairs: int = 300, depth: int = 100) -> None:
    import sys

    sys.path.insert(0, folder)
    import rbo as reference  # noqa: E402  (their script, only timed)

    rng = np.random.default_rng(5)
    a = np.argsort(rng.random((pairs, 2 * depth)), axis=1)[:, :depth]
    b = np.argsort(rng.random((pairs, 2 * depth)), axis=1)[:, :depth]
    scores = -(np.arange(depth) // 3).astype(np.float64)
    offsets = np.arange(pairs + 1) * depth
    lists = [(reference.extract_ranking([f"d{i}" for i in a[q]], scores),
              reference.extract_ranking([f"d{i}" for i in b[q]], scores)) for q in range(pairs)]
    ours = theirs = 0.0
    for _ in range(3):
        start = time.perf_counter()
        x = rankings(a.ravel(), offsets, np.tile(scores, pairs))
        y = rankings(b.ravel(), offsets, np.tile(scores, pairs))
        mine = rbo_rankings(x, y, p=0.9, threads=1)
        ours += time.perf_counter() - start
        start = time.perf_counter()
        got = [reference.rbo(u, v, 0.9, ties="a")["ext"] for u, v in lists]
        theirs += time.perf_counter() - start
    assert np.allclose(mine.ext, got, rtol=0, atol=1e-12)
    print(f"{pairs} tied query pairs of {depth}: irmetrics {ours / 3:.3f} s, Corsi & Urbano's"
          f" script {theirs / 3:.3f} s ({theirs / ours:.0f}x), equal to 1e-12")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--leaderboards", type=int, default=1000)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--reference", metavar="DIR")
    parser.add_argument("--similarity", action="store_true",
                        help="only the run-similarity figure (see the module notes)")
    parser.add_argument("--depths", default="100,1000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--typed", type=int, metavar="N",
                        help="only the coverage of the type-mean intervals, N benchmarks")
    options = parser.parse_args()
    if options.typed:
        typed_coverage(options.typed)
        raise SystemExit(0)
    if options.similarity:
        similarity_speed([int(d) for d in options.depths.split(",")], options.repeats)
        raise SystemExit(0)
    if options.reference:
        against_reference(options.reference)
    coverage(options.leaderboards)
    if not options.skip_speed:
        speed()
