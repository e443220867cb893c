"""``irmetrics compare``: is the difference between runs real? And a CI gate.

Runs are evaluated on one qrels (or read from ``trec_eval -q`` / ``irmetrics eval -q``
output files), aligned on their common queries and tested with :func:`irmetrics.compare`.
``--fail-if-worse`` turns the comparison into a gate for continuous integration.
See docs/compare.md.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import warnings

import polars as pl

from ..checks import check_float, parameter_error
from ..exceptions import brief_repr
from ..comparison import COMPARE_TESTS, CORRECTIONS, MAX_RESAMPLES, check_alpha, compare
from ..io.columnar import is_columnar
from ..io.external import is_irds, is_json
from ..io.per_query import read_per_query
from ..containers.trec_text import read_source
from ..io.output import check_not_input, same_file, write_text
from ..comparison.formatting import printable
from .inputs import open_lines, read_files, split_names
from .options import (LABEL_SAMPLES_DEFAULT, label_samples, EXIT_INPUT, EXIT_OK, EXIT_USAGE, CliError, CliParser,
                      add_evaluation, add_output, add_version, evaluation_options,
                      add_threads, load_measure_files, parse_int, parse_threads)

#: Exit status when ``--fail-if-worse`` finds a candidate worse than its baseline.
EXIT_WORSE = 3

#: Measures compared when no ``-m`` is given and the runs need evaluating.
DEFAULT_MEASURES = ("map", "ndcg_cut.10", "P.10", "recip_rank")

DESCRIPTION = """\
Compare runs measure by measure on the same queries: mean difference, confidence
interval, effect size, p-value of a paired test, corrected for multiple comparisons.

  irmetrics compare [options] qrels run run [run ...]
  irmetrics compare [options] a.eval b.eval [c.eval ...]   (trec_eval -q outputs)

A run (or -q file) given as NAME=PATH is called NAME in every table and the report
(BM25=runs/bm25.run); otherwise by its file name.
Each run is evaluated as 'irmetrics eval' would (same -c -J -M -l); files written by
'trec_eval -q' or 'irmetrics eval -q' are used as they are (values as printed)."""

EPILOG = """\
examples:
  irmetrics compare qrels.txt bm25.run dense.run              t-test, Holm, all pairs
  irmetrics compare qrels.txt BM25=bm25.run Dense=dense.run   tables say BM25, Dense
  irmetrics compare -m map -m nDCG@10 --baseline bm25.run qrels.txt bm25.run a.run b.run
  irmetrics compare --test randomization --resamples 100000 qrels.txt a.run b.run
  irmetrics compare --test tukey --format latex qrels.txt a.run b.run c.run
  irmetrics compare bm25.eval dense.eval                      from trec_eval -q outputs
  irmetrics compare --format html -o report.html qrels.txt a.run b.run   report with plots
  irmetrics compare --baseline main.run --fail-if-worse --margin 0.01 qrels main.run pr.run

tests: t (paired t-test, default), randomization (paired sign-flip, exact up to 20
queries), bootstrap (paired), wilcoxon and sign (less reliable, warned), tukey
(randomised Tukey HSD over all runs; controls the family-wise error itself).

exit status: 0 ok; 1 usage; 2 unreadable or malformed input, bad parameter; 3 with
--fail-if-worse, a run is worse than its baseline; 4 the runs cannot be compared."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics compare", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    g = p.add_argument_group("comparison")
    g.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(g)
    g.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure to compare, repeatable (e.g. -m map -m ndcg_cut.10 -m nDCG@10);"
                        f" default {' '.join(DEFAULT_MEASURES)}, or every measure of the"
                        " -q files")
    g.add_argument("--baseline", action="append", metavar="RUN",
                   help="compare every other run with this one (repeatable for several"
                        " baselines); its NAME, file name or path as given (e.g. --baseline"
                        " bm25.run); default: every pair")
    g.add_argument("--test", choices=COMPARE_TESTS, default="t",
                   help="statistical test (default t)")
    g.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-testing correction over each measure's comparisons"
                        " (default holm)")
    g.add_argument("--alpha", default="0.05", metavar="A",
                   help="significance level; intervals are at 1 - A (default 0.05)")
    g.add_argument("--resamples", default="10000", metavar="B",
                   help="resamples of the randomisation, bootstrap and tukey tests"
                        " (default 10000)")
    g.add_argument("--seed", default="0", metavar="S",
                   help="random seed; the same seed gives the same numbers (default 0)")
    add_threads(g)
    add_output(g, html="a self-contained report with plots")
    g.add_argument("--bounds", action="store_true",
                   help="also say whether each conclusion holds at both ends of the bounds"
                        " over the retrieved documents absent from the qrels"
                        " (docs/incomplete_judgments.md) (e.g. --bounds)")
    g.add_argument("--fill-from", metavar="MACHINE_QRELS",
                   help="fill the holes of the qrels with this judge's labels: compare on"
                        " the filled qrels, say how much of each score rests on the judge's"
                        " labels and whether each conclusion holds at both ends of the"
                        " bounds over what is still unjudged (e.g. --fill-from qrels.llm.txt)")
    g.add_argument("--label-distributions", metavar="FILE",
                   help="compare the expected values under these label distributions"
                        " (`query iter doc label prob` lines); intervals carry the topic and"
                        " the label sampling (e.g. --label-distributions labels.dist.txt)")
    g.add_argument("--label-samples", default=LABEL_SAMPLES_DEFAULT, metavar="S",
                   help="labellings drawn under --label-distributions (default 1000)"
                        " (e.g. --label-samples 200)")
    gate = p.add_argument_group("CI gate")
    gate.add_argument("--fail-if-worse", action="store_true",
                      help="exit 3 when a run is significantly worse than its baseline"
                           " (needs --baseline); a row the test cannot decide (no variance,"
                           " too few queries) is reported on stderr, not failed")
    gate.add_argument("--margin", metavar="M",
                      help="with --fail-if-worse, also fail when a run is worse by more than M,"
                           " significant or not (e.g. --margin 0.01)")
    add_evaluation(p, complete=", instead of leaving them out of the comparison", level="")
    g.add_argument("--nuggets", metavar="FILE",
                   help="nuggetizer's nugget file: the files are then its assignment files,"
                        " every run in them a system, compared on nugget measures"
                        " (default -m all_score)")
    p.add_argument("files", nargs="+", metavar="file",
                   help="qrels then two or more runs; or two or more -q evaluation files;"
                        " a run as NAME=PATH is called NAME (e.g. BM25=bm25.run)")
    return p


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    alpha = check_alpha("--alpha", _parse_float("--alpha", args.alpha))
    margin = None if args.margin is None else _parse_float("--margin", args.margin)
    if margin is not None and margin < 0:
        raise parameter_error("--margin", "a finite real number >= 0", args.margin)
    n_resamples = parse_int("--resamples", args.resamples, minimum=1)
    if n_resamples > MAX_RESAMPLES:
        raise parameter_error("--resamples", f"an integer between 1 and {MAX_RESAMPLES}",
                              args.resamples)
    seed = parse_int("--seed", args.seed, minimum=0)
    threads = parse_threads(args.threads)
    if args.fail_if_worse and not args.baseline:
        raise CliError("--fail-if-worse needs --baseline (which run is the reference?)",
                       EXIT_USAGE)
    if margin is not None and not args.fail_if_worse:
        raise CliError("--margin goes with --fail-if-worse", EXIT_USAGE)
    if args.format == "html":
        _require_matplotlib()

    load_measure_files(args.measures_from, stderr, "irmetrics compare")
    nuggets = args.nuggets is not None
    given_names, paths = split_names(args.files) if not nuggets else \
        ([None] * len(args.files), args.files)
    read = read_files(paths + ([args.nuggets] if nuggets else []), args.measures_from)
    if args.output is not None:
        # Before any work: the output must not be one of the inputs.
        check_not_input("-o", args.output, read)
    qrels, runs = _inputs(paths) if not nuggets else (None, _nugget_runs(args, stderr))
    if qrels is None:
        _refuse_evaluation_options(args)
    elif given_names[0] is not None:
        raise CliError(f"{brief_repr(args.files[0])}: the qrels take no name (NAME=PATH names a run)",
                       EXIT_USAGE)
    measures = args.measures
    if measures is None:
        measures = list(DEFAULT_MEASURES) if qrels is not None else _common_names(runs)
    names = _run_names(runs, given_names[len(paths) - len(runs):]) if not nuggets else \
        [r.run_name for r in runs]
    baselines = [_resolve(b, names, runs) for b in args.baseline] if args.baseline else None
    options = {}
    if qrels is not None:
        options = evaluation_options(args)
        if args.bounds:
            options["unjudged"] = "bounds"
    elif args.bounds or args.fill_from or args.label_distributions:
        raise CliError("--bounds, --fill-from and --label-distributions need qrels (they"
                       " come from evaluating the runs)", EXIT_USAGE)
    judge = _judge_options(args, options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comparison = compare(qrels, dict(zip(names, runs)), measures, baseline=baselines,
                             test=args.test, correction=args.correction, alpha=alpha,
                             n_resamples=n_resamples, seed=seed, threads=threads, **judge,
                             **options)
    for warning in caught:
        if not issubclass(warning.category, UserWarning):
            continue  # numerical RuntimeWarnings are the library's business, not the user's
        stderr.write(f"irmetrics compare: warning: {warning.message}\n")
    _write(_render(comparison, args.format), args.output, stdout, read)
    if args.fail_if_worse:
        regressions = comparison.regressions(margin=margin)
        for regression in regressions:
            stderr.write(f"irmetrics compare: FAIL: {regression}\n")
        failed = {(r.measure, r.system, r.baseline) for r in regressions}
        for row in comparison.table().filter(pl.col("caveat").is_not_null()
                                             & (pl.col("diff") < 0)).iter_rows(named=True):
            if (row["measure"], row["system"], row["baseline"]) not in failed:
                stderr.write(f"irmetrics compare: gate: {row['system']!r} is worse than baseline"
                             f" {row['baseline']!r} on {row['measure']} (diff {row['diff']:+.4f})"
                             f" but the {args.test} test cannot decide it ({row['caveat']}):"
                             " not counted as a failure (see the warning above; --margin"
                             " fails on the size of a difference)\n")
        if regressions:
            return EXIT_WORSE
    return EXIT_OK


def _nugget_runs(args, stderr) -> list:
    """The Results of every run of the assignment files (``--nuggets``), runs named by
    their run ids; ``-m`` defaults to ``all_score``."""
    from ..rag import NuggetEvaluator

    if args.measures is None:
        args.measures = ["all_score"]
    evaluator = NuggetEvaluator(args.nuggets, args.measures)
    runs: dict = {}
    for path in args.files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = evaluator.evaluate_all(path)
        for warning in caught:
            stderr.write(f"irmetrics compare: warning: {path}: {warning.message}\n")
        for run in found:
            if run in runs:
                raise CliError(f"{path}: run {run!r} is in two assignment files", EXIT_USAGE)
        runs.update(found)
    if len(runs) < 2:
        raise CliError("give assignments of at least two runs to compare", EXIT_USAGE)
    return list(runs.values())
def _judge_options(args, options: dict) -> dict:
    """``fill_from`` / ``label_distributions`` of :func:`compare`, or ``{}``."""
    if args.fill_from and args.label_distributions:
        raise CliError("--fill-from and --label-distributions are two kinds of machine"
                       " judgments: give one", EXIT_USAGE)
    if not args.label_distributions:
        label_samples(args, False)  # refuses a lone --label-samples
    if not (args.fill_from or args.label_distributions):
        return {}
    if args.Judged_docs_only or args.bounds or options.get("ties", "trec_eval") != "trec_eval" \
            or args.float_relevance:
        raise CliError("--fill-from and --label-distributions take neither -J, --bounds"
                       " (--fill-from carries the bounds), --ties nor --float-relevance",
                       EXIT_USAGE)
    options.pop("judged_only", None)
    options.pop("ties", None)
    options.pop("relevance", None)
    if args.fill_from:
        return {"fill_from": args.fill_from}
    return {"label_distributions": args.label_distributions,
            "label_samples": label_samples(args, True)}


def _refuse_evaluation_options(args) -> None:
    """-q evaluation files are already evaluated: an option that changes evaluation
    cannot apply, and ignoring it would print a table the user did not ask for."""
    given = [flag for flag, used in (
        ("-c", args.complete_rel_info_wanted), ("-J", args.Judged_docs_only),
        ("-M", args.Max_retrieved_per_topic is not None), ("-l", args.level_for_rel != "1"),
        ("--semantics", args.semantics != "trec_eval"),
        ("--ties", args.ties != "trec_eval"),
        ("--float-relevance", args.float_relevance)) if used]
    if given:
        verb = "changes" if len(given) == 1 else "change"
        raise CliError(f"{', '.join(given)} {verb} how runs are evaluated; the -q evaluation"
                       " files are already evaluated (give the qrels and the runs instead)",
                       EXIT_USAGE)


def _render(comparison, fmt: str) -> str:
    if fmt == "table":
        return comparison.to_text()
    if fmt == "markdown":
        return comparison.to_markdown()
    if fmt == "latex":
        return comparison.to_latex()
    if fmt == "json":
        return comparison.to_json()
    if fmt == "html":
        return comparison.to_html()
    return comparison.to_csv()


def _require_matplotlib() -> None:
    """Before any work: the report's plots need the optional matplotlib."""
    from ..comparison.plot import INSTALL_HINT

    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise CliError(f"--format html draws plots with matplotlib, which is not installed:"
                       f" {INSTALL_HINT}", EXIT_USAGE) from None


def _write(text: str, output: str | None, stdout, inputs: dict) -> None:
    """``text`` to ``output`` (never one of ``inputs``, :func:`.inputs.read_files`), or to
    ``stdout``."""
    if output is None:
        stdout.write(text)
        return
    try:
        write_text(output, text, name="-o", inputs=inputs)
    except OSError as exc:
        raise CliError(f"cannot write {output!r}: {exc.strerror or exc}", EXIT_INPUT) from None


def _parse_float(option: str, text: str) -> float:
    try:
        value: float | str = float(text)
    except ValueError:
        value = text
    return check_float(option, value)


def _inputs(files: list[str]):
    """``(qrels or None, runs)``: -q evaluation files need no qrels; otherwise the first
    file is the qrels and the rest are runs or evaluation files. Each file is told by
    the fields of its first data line (3: a -q file, 4: qrels, 6 or more: a run), so a
    file that is none of them is named as such before any reader sees it."""
    fields = [_first_fields(f) for f in files]
    runs: list  # paths, or -q files already read
    for path, count in zip(files, fields):
        if count == 0:
            raise CliError(f"{path}: empty (no data line): neither qrels, a run nor a -q"
                           " evaluation file", EXIT_INPUT)
    if fields[0] == 3:
        for path, count in zip(files, fields):
            if count != 3:
                raise CliError(f"{path}: {_looks_like(count)}, not a -q evaluation file; the"
                               f" first file ({files[0]}) is one, so every file must be one (or"
                               " give the qrels first, then the runs)", EXIT_USAGE)
        qrels, runs = None, [read_per_query(f) for f in files]
    else:
        if fields[0] not in (4, _COLUMNAR, None):
            raise CliError(f"{files[0]}: {_looks_like(fields[0])}; the first file must be the"
                           " qrels (4 fields: query_id iteration doc_id relevance), or every"
                           " file a -q evaluation file (3 fields: measure query_id value)",
                           EXIT_USAGE)
        for path, count in zip(files[1:], fields[1:]):
            if count is not None and count not in (3, _COLUMNAR) and count < 6:
                raise CliError(f"{path}: {_looks_like(count)}, neither a run (6 fields:"
                               " query_id Q0 doc_id rank score run_id) nor a -q evaluation"
                               " file (3 fields: measure query_id value)", EXIT_USAGE)
        qrels = files[0]
        runs = [read_per_query(f) if k == 3 else f for f, k in zip(files[1:], fields[1:])]
    if len(runs) < 2:
        raise CliError("give at least two runs to compare (irmetrics compare qrels run run"
                       " ...), or two -q evaluation files", EXIT_USAGE)
    return qrels, runs


#: :func:`_first_fields` of a Parquet / Arrow file (read as a table, not as lines).
_COLUMNAR = -1


def _looks_like(count: int | None) -> str:
    kinds = {3: "a -q evaluation file (3 fields)", 4: "qrels (4 fields)"}
    if count is None:
        return "its first lines hold no data line"
    if count in kinds:
        return f"this is {kinds[count]}"
    if count >= 6:
        return f"this is a run ({count} fields)"
    return f"its first data line has {count} field{'s' if count != 1 else ''}"


def _first_fields(path: str) -> int | None:
    """Fields of the first data line among the first thousand (``#`` comments and blank
    lines skipped); 0 for a file without any line of data, None when none of the first
    thousand lines holds data, :data:`_COLUMNAR` for a Parquet / Arrow file. Unreadable
    files raise the readers' one-line "cannot read file" error."""
    if is_columnar(path) or is_irds(path) or is_json(path):
        return _COLUMNAR
    if path == "-":
        # Peek at stdin's buffer: nothing is consumed, the reader still gets every byte.
        peek = getattr(getattr(sys.stdin, "buffer", None), "peek", None)
        return _count_fields(peek(1 << 16).splitlines()) if peek is not None else None
    try:
        return _count_fields(open_lines(path))
    except OSError:
        read_source(path)  # raises the readers' one-line error
    except EOFError:
        pass
    return None


def _count_fields(lines) -> int | None:
    seen = 0
    for seen, line in enumerate(lines, start=1):
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            return len(fields)
        if seen >= 1000:
            return None
    return 0


def _paths(runs: list) -> list[str]:
    """Each run's path as given (run files are paths, -q files were read from one)."""
    return [r if isinstance(r, str) else r.source for r in runs]


def _run_names(runs: list, given: list) -> list[str]:
    """The names given (``NAME=PATH``), else the file names, or the paths as given
    where two file names are the same."""
    paths = _paths(runs)
    for first, second in itertools.combinations(paths, 2):
        if first == second or same_file(first, second):
            raise CliError(f"the same file is given twice: {printable(first)}"
                           + ("" if first == second else f" and {printable(second)}"), EXIT_USAGE)
    names = [os.path.basename(p) or p for p in paths]
    if len(set(names)) < len(names):
        names = paths
    names = [g if g is not None else n for g, n in zip(given, names)]
    if len(set(names)) < len(names):
        raise CliError(f"two runs are named {brief_repr(min(n for n in names if names.count(n) > 1))}"
                       " (NAME=PATH names must differ from each other and from the other"
                       " runs' file names)", EXIT_USAGE)
    return names


def _resolve(baseline: str, names: list[str], runs: list) -> str:
    """A ``--baseline`` value as a run name: the name itself, the path as given, or the
    file name of a run named with NAME=PATH."""
    if baseline in names:
        return baseline
    # the runs of an assignment file (--nuggets) share it: they have no path of their own
    sources = [r if isinstance(r, str) else getattr(r, "source", None) for r in runs]
    named = [(name, str(path)) for name, path in zip(names, sources) if path]
    for name, path in named:
        if os.path.abspath(path) == os.path.abspath(baseline):
            return name
    by_file = [name for name, path in named if os.path.basename(path) == baseline]
    if len(by_file) == 1:
        return by_file[0]
    raise CliError(f"--baseline {brief_repr(baseline)} is not one of the runs"
                   f" ({', '.join(map(brief_repr, names))})", EXIT_USAGE)


def _common_names(runs: list) -> list[str]:
    """Scores every -q file has, in the first file's order; counts (``num_ret``,
    ``num_rel``, ...) are left out: they are not effectiveness scores."""
    from ..measures.registry import MEAN, REGISTRY

    def is_score(name: str) -> bool:
        if name.startswith("Z") and name not in REGISTRY:
            name = name[1:]  # trec_eval -Z prefixes every name with Z
        measure = REGISTRY.get(name) or REGISTRY.get(name.rsplit("_", 1)[0])
        return measure is None or measure.summary == MEAN

    first = runs[0].names
    return [n for n in first if is_score(n) and all(n in r.columns for r in runs[1:])]
