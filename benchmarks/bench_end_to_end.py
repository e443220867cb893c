#!/usr/bin/env python
"""End-to-end wall time and peak memory: irmetrics vs pytrec_eval (vs trec_eval).

    python benchmarks/bench_end_to_end.py [--data benchmarks/data] [--repeat 3] [--scaling]

Every measurement is a fresh subprocess (cold interpreter, nothing cached in-process); the
jobs are interleaved across repeats (A B C D A B C D ...) so that drift in machine state
(thermal, page cache, noisy neighbours) hits all of them alike, and the median is reported.

Jobs (same six measures everywhere: map P.10 recall.1000 recip_rank ndcg ndcg_cut.10):

1. ``irmetrics CLI``      python -m irmetrics eval -m ... qrels run   (stdout -> /dev/null)
2. ``irmetrics.evaluate`` child times irmetrics.evaluate(qrels, run, measures).aggregate()
3. ``pytrec_eval``        child times parse_qrel + parse_run + RelevanceEvaluator.evaluate
                          + per-measure means
4. ``trec_eval``          the C binary, if on PATH

This is a benchmark, not a test: it asserts nothing about timings.  Only the standard
library is imported in this (parent) process; see ``_peak_rss_method`` for why that matters.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MEASURES = ["map", "P.10", "recall.1000", "recip_rank", "ndcg", "ndcg_cut.10"]
SCALING_SIZES = [1000, 10000, 100000]
DEFAULT_QUERIES = 7000
DEPTH = 1000
MIB = 1 << 20

# Children are started as ``python -c BOOTSTRAP kind qrels run`` with cwd = repository root,
# so ``import irmetrics`` resolves exactly as for ``python -m irmetrics`` (cwd first on
# sys.path: an installed package or the source checkout, whichever the CLI job also sees).
BOOTSTRAP = (
    "import sys; sys.path.append({bench!r}); "
    "import bench_end_to_end as b; sys.exit(b._child(sys.argv[1:]))"
).format(bench=str(BENCH_DIR))


# =========================================================================== children
def _self_peak_rss_mib() -> float:
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / MIB if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def _norm(name: str) -> str:
    return str(name).replace(".", "_")


def _to_means(agg) -> dict:
    """Best-effort {measure: float} from whatever ``.aggregate()`` returns (for a printed
    cross-check only; the interface of the result object is not pinned down here)."""
    try:
        if hasattr(agg, "items"):
            return {_norm(k): float(v) for k, v in agg.items()}
        if hasattr(agg, "to_dicts"):  # polars DataFrame
            rows = agg.to_dicts()
            if len(rows) == 1:
                return {_norm(k): float(v) for k, v in rows[0].items()
                        if isinstance(v, (int, float))}
            out = {}
            for r in rows:  # long format: one str column (measure), one number column (value)
                names = [v for v in r.values() if isinstance(v, str)]
                nums = [v for v in r.values() if isinstance(v, float)]
                if len(names) == 1 and len(nums) == 1:
                    out[_norm(names[0])] = nums[0]
            if out:
                return out
    except Exception as e:  # noqa: BLE001 - informative only
        return {"unparsed": f"{type(e).__name__}: {e}"}
    return {"unparsed": repr(agg)[:200]}


def _child_irmetrics(qrels: str, run: str) -> dict:
    t0 = time.perf_counter()
    import irmetrics

    t1 = time.perf_counter()
    res = irmetrics.evaluate(qrels, run, MEASURES)
    agg = res.aggregate()
    t2 = time.perf_counter()
    return {
        "import_s": t1 - t0,
        "timed_s": t2 - t1,
        "means": _to_means(agg),
        "irmetrics_file": getattr(irmetrics, "__file__", None),
        "irmetrics_version": getattr(irmetrics, "__version__", None),
    }


def _child_pytrec_eval(qrels: str, run: str) -> dict:
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    with open(qrels) as f:
        qrel = pytrec_eval.parse_qrel(f)
    t2 = time.perf_counter()
    with open(run) as f:
        run_d = pytrec_eval.parse_run(f)
    t3 = time.perf_counter()
    # pytrec_eval accepts trec_eval's "P.10" spelling; result keys come back as "P_10"
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, set(MEASURES))
    t4 = time.perf_counter()
    per_query = evaluator.evaluate(run_d)
    t5 = time.perf_counter()
    keys = sorted(next(iter(per_query.values())).keys()) if per_query else []
    means = {k: sum(v[k] for v in per_query.values()) / len(per_query) for k in keys}
    t6 = time.perf_counter()
    return {
        "import_s": t1 - t0,
        "timed_s": t6 - t1,
        "breakdown_s": {"parse_qrel": t2 - t1, "parse_run": t3 - t2, "evaluator_init": t4 - t3,
                        "evaluate": t5 - t4, "means": t6 - t5},
        "queries_evaluated": len(per_query),
        "means": means,
    }


def _child(argv: list[str]) -> int:
    kind, qrels, run = argv
    fn = {"irmetrics": _child_irmetrics, "pytrec_eval": _child_pytrec_eval}[kind]
    out = fn(qrels, run)
    out["peak_rss_mib"] = _self_peak_rss_mib()  # measured last: covers the whole run
    print(json.dumps(out))
    return 0


# =========================================================================== parent
def _peak_rss_method() -> str | None:
    """Return the path of a usable GNU time, or None.

    How peak RSS is measured, and why:

    * ``getrusage(RUSAGE_CHILDREN)`` is a max over *all* reaped children so far, so deltas
      between jobs are meaningless once a bigger job has run.
    * ``os.wait4(pid)`` / the child's own ``getrusage(RUSAGE_SELF).ru_maxrss`` are per
      process but, on Linux, inherit the RSS high-water mark of the process that forked
      the child: subprocess uses vfork/fork+exec, and exec folds the old mm's hiwater
      (the parent's!) into the new process's maxrss.  A 3 GB parent makes a
      ``python -c pass`` child report 3 GB (checked on this machine).
    * GNU ``/usr/bin/time -f %M`` forks the command from its own tiny process, so the
      inherited floor is ~1-2 MiB; %M is the command's own maximum RSS from wait4.

    So: every job runs under GNU time when available, and its %M is the reported peak RSS.
    Python children additionally self-report ru_maxrss (clean for the same reason: their
    parent is ``time``); both are printed in the JSON.  Without GNU time we fall back to
    os.wait4's ru_maxrss and keep this parent small (stdlib only, data generation in a
    subprocess), so the inherited floor is this parent's own peak, printed in the header.
    """
    exe = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if not exe:
        return None
    with tempfile.NamedTemporaryFile("r") as tf:
        try:
            r = subprocess.run([exe, "-f", "%M", "-o", tf.name, "true"],
                               capture_output=True, timeout=10)
            ok = r.returncode == 0 and tf.read().strip().isdigit()
        except (OSError, subprocess.SubprocessError):
            ok = False
    return exe if ok else None


GNU_TIME = None  # set in main()


def run_job(cmd: list[str], capture: bool, timeout: float | None) -> dict:
    """Run ``cmd`` once; wall time is taken here, around the whole subprocess."""
    with tempfile.TemporaryDirectory(prefix="irmbench-") as td:
        tfile, ofile, efile = (os.path.join(td, n) for n in ("time", "out", "err"))
        full = ([GNU_TIME, "-f", "%M", "-o", tfile] if GNU_TIME else []) + cmd
        with open(ofile, "wb") as out, open(efile, "wb") as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(full, stdout=out if capture else subprocess.DEVNULL,
                                 stderr=err, cwd=REPO_ROOT, start_new_session=True)
            timer = None
            if timeout is not None:  # kill only our own child's process group
                timer = threading.Timer(timeout, os.killpg, (p.pid, signal.SIGKILL))
                timer.start()
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            if timer is not None:
                timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        if timer is not None and timer.finished.is_set() and p.returncode < 0:
            return {"ok": False, "error": f"timed out after {timeout:g}s", "wall_s": wall}
        res: dict = {"wall_s": wall, "rc": p.returncode}
        if GNU_TIME:
            lines = Path(tfile).read_text().split()
            # GNU time prefixes "Command exited with non-zero status N" on failures
            res["peak_rss_mib"] = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else None
        else:
            res["peak_rss_mib"] = ru.ru_maxrss / (MIB if sys.platform == "darwin" else 1024)
        stderr = Path(efile).read_text(errors="replace")
        if p.returncode != 0:
            tail = [ln for ln in stderr.strip().splitlines() if ln.strip()][-3:]
            res.update(ok=False, error=f"rc={p.returncode}: " + " | ".join(tail)[-300:])
            return res
        res["ok"] = True
        if capture:
            try:
                child = json.loads(Path(ofile).read_text().strip().splitlines()[-1])
            except (ValueError, IndexError) as e:
                return {**res, "ok": False, "error": f"bad child output: {e}"}
            res["child"] = child
            res["child_peak_rss_mib"] = child.pop("peak_rss_mib", None)
            if not GNU_TIME and res["child_peak_rss_mib"] is not None:
                res["peak_rss_mib"] = res["child_peak_rss_mib"]
        return res


def ensure_data(out: Path, queries: int, seed: int) -> dict:
    """Generate ``out`` with generate.py's ``generate()`` if missing.  Done in a subprocess
    so the big numpy arrays never inflate this process's RSS high-water mark."""
    if not ((out / "qrels.txt").exists() and (out / "run.txt").exists()):
        print(f"# generating {out} (queries={queries}, depth={DEPTH}, seed={seed}) ...",
              flush=True)
        code = (f"import sys; sys.path.insert(0, {str(BENCH_DIR)!r}); import generate; "
                f"generate.generate({str(out)!r}, queries={queries}, depth={DEPTH}, seed={seed})")
        subprocess.run([sys.executable, "-c", code], check=True)
    meta = out / "meta.json"
    info = json.loads(meta.read_text()) if meta.exists() else {}
    for name in ("qrels", "run"):
        info.setdefault(f"{name}_bytes", (out / f"{name}.txt").stat().st_size)
        if f"{name}_lines" not in info:
            with open(out / f"{name}.txt", "rb") as f:
                info[f"{name}_lines"] = sum(c.count(b"\n") for c in iter(lambda: f.read(1 << 24), b""))
    return info


def warm_page_cache(*paths: Path) -> None:
    """Read the inputs once so the first job does not pay for cold disk reads."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 23):
                pass


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def print_environment(python: str) -> None:
    # versions via importlib.metadata of *this* interpreter: numpy/polars are not imported
    # here (keeps the parent small); if --python differs, the child JSON shows irmetrics' file.
    cpu_model = "?"
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu_model = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"# python       {platform.python_version()} ({python})")
    print(f"# numpy        {_version('numpy')}")
    print(f"# polars       {_version('polars')}")
    print(f"# pytrec_eval  {_version('pytrec-eval-terrier')} (pytrec-eval-terrier)")
    print(f"# irmetrics    {_version('irmetrics')} (installed dist; see child for file)")
    print(f"# cpus         {os.cpu_count()} logical, {affinity} usable; {cpu_model}")
    print(f"# memory       {mem}; {platform.platform()}")
    if hasattr(os, "getloadavg"):
        print("# load avg     %.2f %.2f %.2f (1/5/15 min; other work on the machine skews timings)"
              % os.getloadavg())
    print(f"# POLARS_MAX_THREADS={os.environ.get('POLARS_MAX_THREADS', '(unset)')}")
    print(f"# peak RSS via {'GNU time %M (' + GNU_TIME + ')' if GNU_TIME else 'os.wait4 ru_maxrss (upper bound; see --help text)'}")


def _fmt(x, spec=".2f", none="-"):
    return none if x is None else format(x, spec)


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(headers).rstrip())
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r).rstrip())


def run_interleaved(jobs: dict, repeat: int, timeout: float | None) -> dict:
    """jobs: name -> {"cmd": [...], "capture": bool}.  Returns name -> list of results."""
    results = {name: [] for name in jobs}
    failed: dict[str, str] = {}
    for rep in range(repeat):
        for name, job in jobs.items():
            if name in failed:
                continue
            r = run_job(job["cmd"], job["capture"], timeout)
            results[name].append(r)
            if r["ok"]:
                msg = f"{r['wall_s']:.2f}s wall, {_fmt(r.get('peak_rss_mib'), '.0f')} MiB"
                if "child" in r:
                    msg += f", {r['child']['timed_s']:.2f}s timed in child"
            else:
                failed[name] = r["error"]
                msg = "FAILED " + r["error"]
            print(f"#   [{rep + 1}/{repeat}] {name}: {msg}", file=sys.stderr, flush=True)
    return results


def summarize(rs: list[dict]) -> dict | None:
    ok = [r for r in rs if r.get("ok")]
    if not ok or len(ok) < len(rs):
        return None
    walls = [r["wall_s"] for r in ok]
    timed = [r["child"]["timed_s"] for r in ok if "child" in r]
    rss = [r["peak_rss_mib"] for r in ok if r.get("peak_rss_mib") is not None]
    return {"wall": statistics.median(walls), "wall_min": min(walls), "wall_max": max(walls),
            "timed": statistics.median(timed) if timed else None,
            "rss": max(rss) if rss else None, "n": len(ok)}


def bench_main(args, python: str) -> dict:
    data = Path(args.data)
    info = ensure_data(data, args.queries, args.seed)
    qrels, run = str((data / "qrels.txt").resolve()), str((data / "run.txt").resolve())
    print(f"# data         {data}: run {info['run_lines']:,} lines ({info['run_bytes'] / MIB:,.0f} MiB), "
          f"qrels {info['qrels_lines']:,} lines ({info['qrels_bytes'] / MIB:,.0f} MiB)")
    print(f"# measures     {' '.join(MEASURES)}")
    warm_page_cache(data / "qrels.txt", data / "run.txt")

    cli = [python, "-m", "irmetrics", "eval"]
    for m in MEASURES:
        cli += ["-m", m]
    jobs = {
        "irmetrics CLI": {"cmd": cli + [qrels, run], "capture": False},
        "irmetrics.evaluate in-process": {
            "cmd": [python, "-c", BOOTSTRAP, "irmetrics", qrels, run], "capture": True},
        "pytrec_eval": {"cmd": [python, "-c", BOOTSTRAP, "pytrec_eval", qrels, run],
                        "capture": True},
    }
    trec_eval = shutil.which("trec_eval")
    if trec_eval:
        te = [trec_eval]
        for m in MEASURES:
            te += ["-m", m]
        jobs["trec_eval"] = {"cmd": te + [qrels, run], "capture": False}
    jobs = {k: v for k, v in jobs.items() if _selected(k, args.only)}

    print(f"# running {len(jobs)} jobs x {args.repeat} repeats, interleaved", flush=True)
    results = run_interleaved(jobs, args.repeat, args.timeout)
    summ = {name: summarize(rs) for name, rs in results.items()}
    base = summ.get("pytrec_eval")

    headers = ["tool", "wall s (median)", "min-max", "timed in child s", "peak RSS MiB",
               "speed-up (wall)", "speed-up (timed)"]
    rows = []
    for name in ["irmetrics CLI", "irmetrics.evaluate in-process", "pytrec_eval", "trec_eval"]:
        if name == "trec_eval" and not trec_eval:
            rows.append([name, "not installed", "", "", "", "", ""])
            continue
        if name not in results:
            rows.append([name, "skipped", "", "", "", "", ""])
            continue
        s = summ[name]
        if s is None:
            err = next((r["error"] for r in results[name] if not r.get("ok")), "?")
            rows.append([name, "failed", "", "", "", "", ""])
            print(f"# {name} failed: {err}")
            continue
        up_wall = f"{base['wall'] / s['wall']:.2f}x" if base else "-"
        up_timed = (f"{base['timed'] / s['timed']:.2f}x"
                    if base and s["timed"] and base["timed"] else "-")
        rows.append([name, f"{s['wall']:.2f}", f"{s['wall_min']:.2f}-{s['wall_max']:.2f}",
                     _fmt(s["timed"]), _fmt(s["rss"], ".0f"), up_wall, up_timed])
    print()
    print_table(headers, rows)
    print("# wall: parent-side, whole subprocess (interpreter start + imports + read + eval + "
          "output); timed: section timed inside the child (after imports); peak RSS: max over "
          "repeats; speed-up = pytrec_eval median / tool median")

    # informative cross-check of the numbers (not an assertion)
    py = next((r["child"] for r in results.get("pytrec_eval", []) if r.get("ok")), None)
    irm = next((r["child"] for r in results.get("irmetrics.evaluate in-process", [])
                if r.get("ok")), None)
    if py:
        b = py["breakdown_s"]
        print("# pytrec_eval breakdown (s, first repeat): " +
              ", ".join(f"{k} {v:.2f}" for k, v in b.items()) +
              f"; {py['queries_evaluated']} queries evaluated")
    if irm:
        print(f"# irmetrics imported from {irm.get('irmetrics_file')} "
              f"(version {irm.get('irmetrics_version')}); import {irm['import_s']:.2f}s")
    if py and irm:
        print("\nmeasure        pytrec_eval       irmetrics   |diff|")
        for k, v in py["means"].items():
            o = irm["means"].get(k)
            d = f"{abs(o - v):.2e}" if isinstance(o, float) else "-"
            print(f"{k:12s} {v:13.6f} {_fmt(o, '15.6f', 'missing'.rjust(15))}   {d}")
        if "unparsed" in irm["means"]:
            print(f"# irmetrics aggregate not understood: {irm['means']['unparsed']}")
    return {"data": info, "results": results, "summary": summ}


def _selected(name: str, only: list[str] | None) -> bool:
    key = {"irmetrics CLI": "cli", "irmetrics.evaluate in-process": "evaluate",
           "pytrec_eval": "pytrec_eval", "trec_eval": "trec_eval"}[name]
    return not only or key in only


def scaling_main(args, python: str) -> dict:
    data = Path(args.data)
    sizes = args.scaling_sizes
    infos = {n: ensure_data(data / f"scale-{n}", n, args.seed) for n in sizes}
    jobs = {"startup (python -c 'import irmetrics')":
            {"cmd": [python, "-c", "import irmetrics"], "capture": False}}
    for n in sizes:
        d = data / f"scale-{n}"
        warm_page_cache(d / "qrels.txt", d / "run.txt")
        cmd = [python, "-m", "irmetrics", "eval"]
        for m in MEASURES:
            cmd += ["-m", m]
        jobs[f"cli {n}"] = {"cmd": cmd + [str((d / "qrels.txt").resolve()),
                                          str((d / "run.txt").resolve())], "capture": False}
    print(f"\n# scaling: irmetrics CLI, {len(sizes)} sizes x {args.repeat} repeats, interleaved",
          flush=True)
    results = run_interleaved(jobs, args.repeat, args.timeout)
    summ = {name: summarize(rs) for name, rs in results.items()}
    startup = summ["startup (python -c 'import irmetrics')"]
    headers = ["queries", "run lines", "qrels lines", "wall s (median)", "peak RSS MiB",
               "s / M run lines", "(wall - startup) / M run lines"]
    rows = []
    for n in sizes:
        s, info = summ[f"cli {n}"], infos[n]
        mlines = info["run_lines"] / 1e6
        if s is None:
            err = next((r["error"] for r in results[f"cli {n}"] if not r.get("ok")), "?")
            rows.append([f"{n:,}", f"{info['run_lines']:,}", f"{info['qrels_lines']:,}",
                         "failed", "", "", ""])
            print(f"# cli {n} failed: {err}")
            continue
        net = (f"{(s['wall'] - startup['wall']) / mlines:.3f}" if startup else "-")
        rows.append([f"{n:,}", f"{info['run_lines']:,}", f"{info['qrels_lines']:,}",
                     f"{s['wall']:.2f}", _fmt(s["rss"], ".0f"), f"{s['wall'] / mlines:.3f}", net])
    print()
    print_table(headers, rows)
    print(f"# startup (interpreter + import irmetrics): "
          f"{_fmt(startup['wall'] if startup else None)} s median; linear growth shows as a "
          "flat last column")
    return {"data": {str(n): infos[n] for n in sizes}, "results": results, "summary": summ}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=_peak_rss_method.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(BENCH_DIR / "data"),
                    help="directory with qrels.txt and run.txt (generated if missing)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scaling", action="store_true",
                    help="also time the irmetrics CLI on 1k/10k/100k queries x 1000 docs")
    ap.add_argument("--scaling-sizes", type=int, nargs="+", default=SCALING_SIZES,
                    metavar="Q", help="query counts for --scaling (default: %(default)s)")
    ap.add_argument("--no-main", action="store_true", help="with --scaling: skip the main table")
    ap.add_argument("--only", nargs="+", choices=["cli", "evaluate", "pytrec_eval", "trec_eval"],
                    help="run only these jobs of the main table")
    ap.add_argument("--queries", type=int, default=DEFAULT_QUERIES,
                    help="queries when generating missing --data (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=42, help="seed when generating missing data")
    ap.add_argument("--timeout", type=float, default=None, help="per-job timeout in seconds")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the jobs")
    ap.add_argument("--json", metavar="PATH", help="write all raw measurements here")
    args = ap.parse_args(argv)

    global GNU_TIME
    sys.stdout.reconfigure(line_buffering=True)  # keep stdout/stderr lines in order when piped
    GNU_TIME = _peak_rss_method()
    print_environment(args.python)
    report = {"measures": MEASURES, "repeat": args.repeat, "gnu_time": GNU_TIME}
    if not args.no_main:
        report["main"] = bench_main(args, args.python)
    if args.scaling:
        report["scaling"] = scaling_main(args, args.python)
    import resource

    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"# benchmark parent peak RSS {parent:.0f} MiB")
    if hasattr(os, "getloadavg"):
        print("# load avg at end %.2f %.2f %.2f" % os.getloadavg())
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str) + "\n")
        print(f"# raw measurements written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
