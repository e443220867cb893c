"""``irmetrics agree``: do judgment sets (human, LLM, ...) agree? And a gate for pipelines
that regenerate judgments.

Every run is evaluated against every qrels set (each run read once), and the tables of
:func:`irmetrics.meta_evaluate` are printed: the leaderboards, the agreement between each
qrels set's leaderboard and the reference's (Kendall's tau-b, tau_AP, Spearman, Pearson,
swapped pairs, top-k overlap, bootstrap intervals over topics), the agreement between the
judges on the documents both judged (Cohen's kappa, Krippendorff's alpha, Jaccard, the
label confusion matrix, coverage), and each leaderboard's discriminative power and swap
rate. ``--fail-if`` turns it into a gate. See docs/meta_evaluation.md.
"""

from __future__ import annotations

import argparse
import math
import os
import warnings

from ..checks import parameter_error
from ..comparison import CORRECTIONS, MAX_RESAMPLES, check_alpha
from ..meta_evaluation import Condition, meta_evaluate
from ..meta_evaluation.report import GATE_STATISTICS
from ..progress import is_terminal
from ..stats import POWER_TESTS
from .compare_cmd import _parse_float, _require_matplotlib, _run_names, _write
from ..io.external import AUTOJUDGE_FORMATS, read_autojudge_leaderboard
from ..io.output import check_not_input
from .inputs import open_lines, read_files, split_name, split_names
from .options import (LABEL_SAMPLES_DEFAULT, label_samples, EXIT_INPUT, EXIT_OK, EXIT_USAGE, CliError, CliParser, add_evaluation,
                      load_measure_files,
                      add_output, add_threads, add_version, evaluation_options, parse_int,
                      parse_threads)

#: Exit status when a ``--fail-if`` condition holds.
EXIT_FAILED = 3

#: Measures ranked when no ``-m`` is given.
DEFAULT_MEASURES = ("ndcg_cut.10", "map")

DESCRIPTION = """\
Do two or more judgment sets agree? Through the leaderboards they give the same runs,
and through the labels they give the documents both judged.

  irmetrics agree [options] --qrels human=h.txt --qrels llm=l.txt run [run ...]
  irmetrics agree [options] --qrels llm=l.txt --leaderboard official.txt run [run ...]
  irmetrics agree [options] --nuggets n.jsonl --qrels human=a.jsonl --qrels llm=b.jsonl
  irmetrics agree [options] --qrels human=h.txt --label-distributions llm=l.dist run ...

The first --qrels is the reference unless --reference names another (or --leaderboard
gives a published one). Each run is evaluated as 'irmetrics eval' would (same -c -J -M -l)
against every qrels set, reading each run file once."""

EPILOG = f"""\
examples:
  irmetrics agree --qrels human=qrels.human --qrels llm=qrels.llm runs/*.run
  irmetrics agree -m ndcg_cut.10 --format markdown --qrels h=a.txt --qrels l=b.txt r1 r2 r3
  irmetrics agree --format html -o agree.html --qrels h=a.txt --qrels l=b.txt runs/*
  irmetrics agree --fail-if 'tau_b<0.9' --fail-if 'kappa<0.4' --qrels h=a --qrels l=b runs/*

--fail-if STATISTIC<OP>NUMBER (OP one of < <= > >=) fails (exit 3) when any row has it
(or has it undefined). Statistics: rankings {', '.join(GATE_STATISTICS['rankings'])};
judges {', '.join(GATE_STATISTICS['judges'])}; stability
{', '.join(GATE_STATISTICS['stability'])}.

--leaderboard FILE: lines 'run value' (every measure) or 'run measure value' (measure as
the output names: map, ndcg_cut_10), '#' comments; or an autojudge-evaluate leaderboard,
'tot' (run_id measure topic_id value) or 'jsonl' (told from the first line, or by
--leaderboard-format), a run's 'all' row or else its mean over topics, one measure
chosen with --leaderboard-measure. Systems that are not among the runs are left out.

exit status: 0 ok; 1 usage; 2 unreadable or malformed input, bad parameter; 3 a --fail-if
condition holds; 4 the judgments cannot be compared."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics agree", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    g = p.add_argument_group("agreement")
    g.add_argument("-h", "--help", action="help", help="show this help and exit")
    add_version(g)
    g.add_argument("--qrels", action="append", metavar="[NAME=]FILE", default=[],
                   help="a judgment set, repeatable; named NAME, or by its file name"
                        " (e.g. --qrels human=qrels.txt)")
    g.add_argument("--label-distributions", action="append", metavar="NAME=FILE", default=[],
                   help="a judgment set whose labels are distributions (lines 'query iter doc"
                        " label prob'), repeatable; a --qrels of the same NAME holds the plain"
                        " labels it completes; each run scored by its expected value"
                        " (e.g. --label-distributions llm=llm.dist.txt)")
    g.add_argument("--label-samples", default=LABEL_SAMPLES_DEFAULT, metavar="S",
                   help="labellings drawn under --label-distributions, the same for every"
                        " run (default 1000) (e.g. --label-samples 200)")
    g.add_argument("--reference", metavar="NAME",
                   help="the reference judgment set (default: the first --qrels)")
    g.add_argument("--leaderboard", metavar="FILE",
                   help="compare every judgment set with this published leaderboard instead")
    g.add_argument("--leaderboard-format", choices=("auto", "irmetrics", *AUTOJUDGE_FORMATS),
                   default="auto",
                   help="the leaderboard's form: irmetrics' lines, autojudge-evaluate's tot"
                        " or jsonl; default auto (from the first line)")
    g.add_argument("--leaderboard-measure", metavar="NAME",
                   help="the measure of a tot / jsonl leaderboard to compare with"
                        " (e.g. --leaderboard-measure NUGGET_RECALL)")
    g.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help=f"measure ranked, repeatable; default {' '.join(DEFAULT_MEASURES)}")
    g.add_argument("--top-k", default="3", metavar="K",
                   help="k of the top-k overlap (default 3)")
    g.add_argument("--resamples", default="1000", metavar="B",
                   help="bootstrap resamples over topics (default 1000; 0: no intervals)")
    g.add_argument("--seed", default="0", metavar="S",
                   help="random seed; the same seed gives the same numbers (default 0)")
    g.add_argument("--alpha", default="0.05", metavar="A",
                   help="significance level of the tests; intervals are at 1 - A (default"
                        " 0.05)")
    g.add_argument("--test", choices=POWER_TESTS, default="t",
                   help="test of the discriminative power (default t)")
    g.add_argument("--correction", choices=CORRECTIONS, default="none",
                   help="multiple-testing correction of the discriminative power (default"
                        " none, as Sakai)")
    g.add_argument("--swap-trials", default="1000", metavar="T",
                   help="splits of the topics into two halves for the swap rate (default"
                        " 1000)")
    g.add_argument("--bin-width", default="0.01", metavar="W",
                   help="width of the difference bins of the swap rate (default 0.01)")
    add_output(g, html="a self-contained page with plots")
    g.add_argument("--quiet", action="store_true",
                   help="no progress bars on stderr (shown, when stderr is a terminal, while"
                        " a long qrels or run file is read; never in a pipe)")
    add_threads(g)
    gate = p.add_argument_group("gate")
    gate.add_argument("--fail-if", action="append", default=[], metavar="CONDITION",
                      help="exit 3 when CONDITION holds for any row, e.g. 'tau_b<0.9'"
                           " (repeatable)")
    add_evaluation(p, complete="", level="; also the judges' Jaccard")
    g.add_argument("--nuggets", metavar="FILE",
                   help="nuggetizer's nugget file: each --qrels is then a nugget assessor's"
                        " assignment file, the runs are run ids in them (default: every"
                        " run all assessors assessed), the measures nugget measures"
                        " (default -m all_score)")
    p.add_argument("runs", nargs="*", metavar="run",
                   help="the runs ranked (two or more); a run as NAME=PATH is called NAME"
                        " (e.g. BM25=bm25.run); with --nuggets, run ids")
    return p


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    alpha = check_alpha("--alpha", _parse_float("--alpha", args.alpha))
    n_resamples = parse_int("--resamples", args.resamples, minimum=0)
    if n_resamples > MAX_RESAMPLES:
        raise parameter_error("--resamples", f"an integer between 0 and {MAX_RESAMPLES}",
                              args.resamples)
    swap_trials = parse_int("--swap-trials", args.swap_trials, minimum=1)
    if swap_trials > MAX_RESAMPLES:
        raise parameter_error("--swap-trials", f"an integer between 1 and {MAX_RESAMPLES}",
                              args.swap_trials)
    bin_width = _parse_float("--bin-width", args.bin_width)
    if bin_width <= 0.0:
        raise parameter_error("--bin-width", "a real number > 0", args.bin_width)
    threads = parse_threads(args.threads)
    conditions = [_condition(text) for text in args.fail_if]
    if args.format == "html":
        _require_matplotlib()
    qrels = _named_qrels(args.qrels)
    distributions = _named_qrels(args.label_distributions, "--label-distributions")
    names = [*qrels, *(n for n in distributions if n not in qrels)]
    if len(names) < (1 if args.leaderboard else 2):
        raise CliError("give two or more --qrels or --label-distributions (or one and a"
                       " --leaderboard)", EXIT_USAGE)
    if args.reference is not None and args.leaderboard is not None:
        raise CliError("--reference and --leaderboard are two references: give one",
                       EXIT_USAGE)
    if args.reference is not None and args.reference not in names:
        raise CliError(f"--reference {args.reference!r} is not one of the --qrels"
                       f" ({', '.join(names)})", EXIT_USAGE)
    nuggets = args.nuggets is not None
    label_options = _label_options(args, distributions)
    if not nuggets and len(args.runs) < 2:
        raise CliError("give at least two runs to rank", EXIT_USAGE)
    runs: list | dict | None
    if nuggets:  # run ids in the assessors' assignment files; none: every run
        runs, run_paths = (list(args.runs) or None), [args.nuggets]
    else:
        given_names, run_paths = split_names(args.runs)
        runs = dict(zip(_run_names(run_paths, given_names), run_paths))
    inputs = read_files([*qrels.values(), *distributions.values(), *run_paths]
                        + ([args.leaderboard] if args.leaderboard else []), args.measures_from)
    if args.output is not None:
        # Before any work: the output must not be one of the inputs.
        check_not_input("-o", args.output, inputs)
    load_measure_files(args.measures_from, stderr, "irmetrics agree")
    options = evaluation_options(args)
    if distributions:
        # what evaluate_uncertain refuses, checked in _label_options
        for name in ("judged_only", "ties", "relevance"):
            options.pop(name, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        meta = meta_evaluate(
            qrels or None, runs,
            list(args.measures or (["all_score"] if nuggets else DEFAULT_MEASURES)),
            reference=args.reference,
            leaderboard=None if args.leaderboard is None else _leaderboard(args),
            k=parse_int("--top-k", args.top_k, minimum=1), n_resamples=n_resamples,
            seed=parse_int("--seed", args.seed, minimum=0), level=1.0 - alpha,
            test=args.test, alpha=alpha, correction=args.correction,
            swap_trials=swap_trials, swap_bin_width=bin_width,
            threads=threads, **({"nuggets": args.nuggets} if nuggets else {}),
            **label_options,
            progress=not args.quiet and is_terminal(stderr), **options)
    for warning in caught:
        if issubclass(warning.category, UserWarning):
            stderr.write(f"irmetrics agree: warning: {warning.message}\n")
    _write(_render(meta, args.format), args.output, stdout, inputs)
    failures = meta.failures(conditions)
    for failure in failures:
        stderr.write(f"irmetrics agree: FAIL: {failure}\n")
    return EXIT_FAILED if failures else EXIT_OK


def _render(meta, fmt: str) -> str:
    return {"table": meta.to_text, "markdown": meta.to_markdown, "latex": meta.to_latex,
            "json": meta.to_json, "html": meta.to_html, "csv": meta.to_csv}[fmt]()


def _condition(text: str) -> Condition:
    try:
        return Condition.parse(text)
    except ValueError as error:
        raise CliError(f"--fail-if {text!r}: {error}", EXIT_USAGE) from None


def _named_qrels(values: list[str], option: str = "--qrels") -> dict:
    """``{name: path}`` of ``--qrels [NAME=]FILE`` values (names from the file names);
    ``option``: the option they come from (``--label-distributions``)."""
    named = {}
    for value in values:
        name, path = split_name(value, f"{option} ")
        if name is None:
            name = os.path.basename(path) or path
        if name in named:
            raise CliError(f"two {option} are named {name!r}; name them: {option} NAME=FILE",
                           EXIT_USAGE)
        named[name] = path
    return named


def _label_options(args, distributions: dict) -> dict:
    """``label_distributions`` and ``label_samples`` of :func:`meta_evaluate`, or ``{}``."""
    if not distributions:
        label_samples(args, False)  # refuses a lone --label-samples
        return {}
    if args.nuggets is not None:
        raise CliError("--label-distributions label documents, --nuggets nuggets: give one",
                       EXIT_USAGE)
    if args.Judged_docs_only or args.float_relevance or \
            getattr(args, "ties", "trec_eval") not in (None, "trec_eval"):
        raise CliError("--label-distributions takes neither -J, --ties nor"
                       " --float-relevance", EXIT_USAGE)
    return {"label_distributions": distributions,
            "label_samples": label_samples(args, True)}


def _leaderboard(args) -> dict:
    """The --leaderboard file, in the form --leaderboard-format names or its first line
    shows: a JSON object (jsonl), four fields (tot), else irmetrics' lines."""
    kind = args.leaderboard_format
    if kind == "auto":
        kind = "irmetrics"
        for raw in open_lines(args.leaderboard):
            text = raw.decode("utf-8", "replace").split("#", 1)[0].strip()
            if text:
                kind = "jsonl" if text.startswith("{") else \
                    "tot" if len(text.split()) == 4 else "irmetrics"
                break
    if kind == "irmetrics":
        if args.leaderboard_measure is not None:
            raise CliError("--leaderboard-measure chooses a measure of a tot or jsonl"
                           " leaderboard", EXIT_USAGE)
        return _read_leaderboard(args.leaderboard)
    return read_autojudge_leaderboard(args.leaderboard, kind, measure=args.leaderboard_measure)


def _read_leaderboard(path: str) -> dict:
    """``{run: value}`` or ``{measure: {run: value}}`` from a leaderboard file."""
    flat: dict[str, float] = {}
    nested: dict[str, dict[str, float]] = {}
    first_line: dict[tuple, int] = {}
    for number, raw in enumerate(open_lines(path), start=1):
        line = raw.decode("utf-8", "replace").split("#", 1)[0].split()
        if not line:
            continue
        if len(line) not in (2, 3):
            raise CliError(f"{path}:{number}: expected 'run value' or 'run measure"
                           f" value', got {len(line)} fields", EXIT_INPUT)
        try:
            value = float(line[-1])
        except ValueError:
            raise CliError(f"{path}:{number}: {line[-1]!r} is not a number",
                           EXIT_INPUT) from None
        if not math.isfinite(value):
            raise CliError(f"{path}:{number}: {line[-1]!r} is not a finite number",
                           EXIT_INPUT)
        key = tuple(line[:-1])
        if key in first_line:
            raise CliError(f"{path}:{number}: a second value for {' '.join(key)!r}"
                           f" (the first is on line {first_line[key]})", EXIT_INPUT)
        first_line[key] = number
        if len(line) == 2:
            flat[line[0]] = value
        else:
            nested.setdefault(line[1], {})[line[0]] = value
    if flat and nested:
        raise CliError(f"{path}: mixes 'run value' and 'run measure value' lines", EXIT_INPUT)
    if not (flat or nested):
        raise CliError(f"{path}: no leaderboard line", EXIT_INPUT)
    return flat or nested
