"""``irmetrics eval``: trec_eval 10 on the irmetrics engine, byte for byte.

The one deliberate difference from trec_eval 10 is what happens to a qrels query that
the run lacks when ``-c`` is not given: trec_eval 10 stops with exit 4 (its message says
``result qid 'X' not found in qrels``), irmetrics warns on stderr, names the queries and
evaluates the others, as trec_eval 9 did. ``--strict`` restores trec_eval 10's stop.
See docs/cli.md.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from ..engine.ordering import SEMANTICS
from ..evaluate import Evaluator
from ..containers import Qrels
from ..exceptions import (MissingQueriesWarning, NoQueriesError, ParameterError,
                          UserMeasureError)
from ..io.columnar import column_names, is_columnar
from ..measures.parse import parse_measures
from ..measures.registry import MEAN, pytrec_eval_supported
from ..progress import is_terminal
from ..results import listed_ids
from .formatting import FORMATS, RunBlock, c_double, render_delimited, render_json, \
    render_markdown, trec_text
from .inputs import RESULTS_FORMATS, read_judgments
from .options import (LABEL_SAMPLES_DEFAULT, label_samples, EXIT_COMPUTE, EXIT_INPUT, EXIT_NO_QUERIES, EXIT_OK, EXIT_USAGE, CliError,
                      CliParser, add_float_relevance, add_measures_from, add_threads,
                      add_ties, add_version, check_measure_syntax, load_measure_files,
                      parse_int, parse_threads)
from .zscores import apply_zscores, read_zscores

DESCRIPTION = """\
Evaluate one or more TREC runs against qrels and print what trec_eval 10 prints,
byte for byte (same measures, names, order, rounding and options).

  irmetrics eval [options] qrels run [run ...]

Files may be gzip-compressed, or Parquet / Arrow IPC tables (by their suffix; see
--run-columns); a run named '-' is read from stdin. Options may come
before or after the file names, flags combine (-qc), arguments attach (-M100) or not
(-M 100), and long options may be shortened (--meas=map)."""

EPILOG = """\
measures (-m, repeatable; trec_eval syntax or friendly names):
  -m map -m P.5,10            trec_eval names with parameters (P_5, P_10)
  -mndcg_cut.10               attached argument, same as -m ndcg_cut.10
  -m official                 nicknames: official (default), all_trec, set
  -m iprec_at_recall..10,.20  recall levels 0.10 and 0.20
  -m ndcg.1=3,2=9             gain 3 for label 1, gain 9 for label 2
  -m nDCG@10 -m 'P(rel=2)@5'  friendly names; printed as typed
  --measures-from mine.py -m 'GradedP(max_label=3)@10'   measures of your own
  irmetrics eval -H           lists every measure

examples:
  irmetrics eval qrels.txt run.txt                       official measures, summary
  irmetrics eval -q -m map -m P.10 qrels.txt run.txt     per-query lines, then summary
  irmetrics eval -c -M1000 qrels.txt run.txt.gz          like trec_eval -c -M1000
  irmetrics eval -m map --format markdown qrels a.run b.run   one table, a column per run
  zcat run.gz | irmetrics eval qrels.txt -               run from stdin

exit status: 0 ok; 1 usage or unknown measure; 2 unreadable or malformed input, bad
parameter; 4 a measure could not be computed (duplicate documents, --strict missing
query); 7 no query of the run is in the qrels."""


def build_parser() -> CliParser:
    p = CliParser(prog="irmetrics eval", description=DESCRIPTION, epilog=EPILOG,
                  formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
    g = p.add_argument_group("trec_eval options")
    g.add_argument("-h", "--help", action="help", help="show this help and exit")
    g.add_argument("-H", action=_MeasureHelp,
                   help="show this help and the list of measures, and exit")
    add_version(g)
    g.add_argument("-q", "--query_eval_wanted", action="store_true",
                   help="also print every query's lines before the summary (e.g. -q)")
    g.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure to compute, repeatable; default 'official' (e.g. -m map"
                        " -m P.5,10, -mndcg_cut.10, -m nDCG@10)")
    g.add_argument("-c", "--complete_rel_info_wanted", action="store_true",
                   help="evaluate every qrels query; a query missing from the run scores as"
                        " trec_eval's one-document placeholder ranking and counts in the"
                        " averages (e.g. -c)")
    g.add_argument("-l", "--level_for_rel", metavar="L", default="1",
                   help="lowest label counted as relevant by binary measures; default 1"
                        " (e.g. -l2)")
    g.add_argument("-n", "--nosummary", action="store_true",
                   help="do not print the summary ('all') lines (e.g. -q -n)")
    g.add_argument("-J", "--Judged_docs_only", action="store_true",
                   help="drop unjudged documents from every ranking, after -M (e.g. -J)")
    g.add_argument("-M", "--Max_retrieved_per_topic", metavar="N",
                   help="keep only the top N documents of each ranking, N >= 0 (e.g. -M1000)")
    g.add_argument("-N", "--Number_docs_in_coll", metavar="N", default="0",
                   help="number of documents in the collection, used by utility only;"
                        " default 0 (e.g. -N 500000)")
    g.add_argument("-R", "--Rel_info_format", metavar="FORMAT", default="qrels",
                   help="format of the judgments file: qrels (default), qrels_jg, prefs,"
                        " qrels_prefs, diversity (intent-aware qrels 'query intent doc rel'"
                        " for alpha_nDCG@k and the other diversity measures), nuggets"
                        " (nuggetizer's nugget file; the runs are its assignment files, for"
                        " all_score and the other nugget measures; e.g. -R qrels)")
    g.add_argument("-T", "--Results_format", metavar="FORMAT", default="trec_results",
                   help="format of the run file; only trec_results exists (e.g. -T"
                        " trec_results)")
    g.add_argument("-Z", "--Zscore", metavar="FILE",
                   help="print per-query values as z-scores against FILE, lines 'query_id"
                        " measure mean stddev'; names print with a Z prefix (e.g. -Z z.txt)")
    g.add_argument("-o", action="store_true", help="obsolete trec_eval option; no effect")
    g.add_argument("-D", "--Debug_level", metavar="LEVEL",
                   help="trec_eval's debug output; not supported by irmetrics")
    x = p.add_argument_group("irmetrics options")
    x.add_argument("--format", choices=FORMATS, default="trec",
                   help="output format: trec (trec_eval's text, default), json, csv, tsv"
                        " (long format: run, file, scope, query_id, measure, value; scope"
                        " 'all' marks summary rows) or markdown (one table, a column per"
                        " run) (e.g. --format csv)")
    x.add_argument("--semantics", choices=SEMANTICS, default="trec_eval",
                   help="trec_eval (trec_eval 10, default) or pytrec_eval (pytrec-eval-terrier"
                        " 0.5.11 = trec_eval 9.0.8: float32 scores, its iprec rounding)"
                        " (e.g. --semantics pytrec_eval)")
    add_ties(x)
    add_float_relevance(x)
    add_measures_from(x)
    x.add_argument("--tie-report", action="store_true",
                   help="print, per run and measure, the number of tied entries that matter"
                        " and the value under trec_eval's tie order, in expectation, at best"
                        " and at worst (e.g. --tie-report -m map -m P.10)")
    x.add_argument("--bounds", action="store_true",
                   help="also print, per measure, its lowest and highest value over every"
                        " labelling of the retrieved documents absent from the qrels"
                        " (<measure>_low, <measure>_high; docs/incomplete_judgments.md)"
                        " (e.g. --bounds -m map -m ndcg_cut.10)")
    x.add_argument("--fill-from", metavar="MACHINE_QRELS",
                   help="fill the holes of the qrels with this judge's labels and print,"
                        " per measure, the bounds, the value on the human labels alone"
                        " (<measure>_human) and the share of the judged documents labelled"
                        " by the judge (<measure>_machine; docs/incomplete_judgments.md)"
                        " (e.g. --fill-from qrels.llm.txt -m map)")
    x.add_argument("--label-distributions", metavar="FILE",
                   help="labels with probabilities (`query iter doc label prob` lines) for"
                        " documents the qrels do not judge: print, per measure, its expected"
                        " value, <measure>_se (the label sampling's standard error) and, in"
                        " the summary, <measure>_ci_low and <measure>_ci_high (95%% interval"
                        " over topics and label samples; docs/incomplete_judgments.md)"
                        " (e.g. --label-distributions labels.dist.txt -m map)")
    x.add_argument("--label-samples", default=LABEL_SAMPLES_DEFAULT, metavar="S",
                   help="labellings drawn under --label-distributions, seed 0 (default 1000)"
                        " (e.g. --label-samples 200)")
    x.add_argument("--strict", action="store_true",
                   help="stop like trec_eval 10 (exit 4) when a qrels query has no results"
                        " and -c is not given, instead of warning and skipping it"
                        " (e.g. --strict)")
    add_threads(x)
    x.add_argument("--strict-road", action="store_true",
                   help="stop with exit 2 instead of reading a qrels-judged run whole when"
                        " it cannot be evaluated chunk by chunk in bounded memory (a pipe,"
                        " --ties expected, --float-relevance, a Latin-1 or malformed file)"
                        " (e.g. --strict-road)")
    x.add_argument("--verbose", action="store_true",
                   help="print on stderr, per run, the road that evaluated it (file or"
                        " table: chunk by chunk in bounded memory; memory: read whole) and"
                        " the thread count (-v prints the version, as in trec_eval)"
                        " (e.g. --verbose)")
    x.add_argument("--quiet", action="store_true",
                   help="no progress bars on stderr (shown, when stderr is a terminal, while"
                        " a long qrels or run file is read; never in a pipe) (e.g. --quiet)")
    x.add_argument("--qrels-columns", metavar="Q,D,REL",
                   help="columns of a Parquet/Arrow qrels file holding query id, doc id and"
                        " label; default query_id,doc_id,relevance or PyTerrier's"
                        " qid,docno,label (e.g. --qrels-columns qid,docno,label)")
    x.add_argument("--run-columns", metavar="Q,D,SCORE",
                   help="columns of Parquet/Arrow run files holding query id, doc id and"
                        " score; default query_id,doc_id,score or PyTerrier's"
                        " qid,docno,score (e.g. --run-columns qid,docno,score)")
    p.add_argument("qrels", help="judgments file: TREC text (.gz too), or Parquet / Arrow IPC"
                                 " (.parquet, .arrow, .feather, .ipc) (e.g. qrels.txt)")
    p.add_argument("runs", nargs="+", metavar="run",
                   help="run file(s): TREC text (.gz too; '-' reads stdin), or Parquet /"
                        " Arrow IPC (e.g. run.txt, run.parquet)")
    return p


class _MeasureHelp(argparse.Action):
    """``-H``: the help text plus every registered measure, from the registry."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from ..measures.registry import NICKNAMES, REGISTRY, load_all

        load_all()  # the descriptions are the kernels' docstrings
        lines = [parser.format_help(), "measures (trec_eval name, friendly name, first line"
                                       " of its description):"]
        for m in sorted(REGISTRY.values(), key=lambda m: m.order):
            friendly = (m.friendly + ("@k" if m.friendly_cutoff else "")) if m.friendly else ""
            summary = (m.doc.strip().splitlines() or [""])[0]
            lines.append(f"  {m.name:<22} {friendly:<12} {summary}")
        lines.append("nicknames:")
        for nick, members in NICKNAMES.items():
            if members:
                ordered = sorted(members, key=lambda n: REGISTRY[n].order)
                lines.append(f"  {nick:<22} {' '.join(ordered)}")
        sys.stdout.write("\n".join(lines) + "\n")
        parser.exit(0)


def run(argv: list[str], stdout, stderr) -> int:
    args = build_parser().parse(argv)
    if args.Debug_level is not None:
        raise CliError("-D (trec_eval debug output) is not supported", 1)
    if args.Results_format not in RESULTS_FORMATS:
        raise CliError(f"illegal retrieval results format {args.Results_format!r} for -T;"
                       " only trec_results exists", EXIT_INPUT)
    max_docs = None if args.Max_retrieved_per_topic is None else \
        parse_int("-M", args.Max_retrieved_per_topic, minimum=0)
    level = parse_int("-l", args.level_for_rel)
    num_docs = parse_int("-N", args.Number_docs_in_coll, minimum=-(2**62), maximum=2**62)
    load_measure_files(args.measures_from, stderr, "irmetrics eval")
    tie_aware = args.ties == "expected" or args.tie_report
    measures = args.measures or (expected_official() if tie_aware else
                                 bounded_official() if args.bounds or args.fill_from
                                 else NUGGET_DEFAULT if args.Rel_info_format == "nuggets"
                                 else scored_official() if args.label_distributions
                                 else ["official"])
    samples = _check_label_options(args, tie_aware)
    if args.fill_from and args.Judged_docs_only:
        raise CliError("--fill-from takes no -J (the judge's share counts the ranking"
                       " with its unjudged documents)", EXIT_USAGE)
    if (args.bounds or args.fill_from) and (tie_aware or args.Rel_info_format != "qrels"
                        or args.Zscore is not None or args.float_relevance):
        raise CliError("--bounds and --fill-from apply to -R qrels with integer labels under trec_eval's"
                       " tie order: it takes neither --ties expected, --tie-report, -Z nor"
                       " --float-relevance", EXIT_USAGE)
    check_measure_syntax(measures)
    if ((args.ties != "trec_eval" or args.tie_report or args.float_relevance
         or args.strict_road) and args.Rel_info_format != "qrels"):
        raise CliError("--ties, --tie-report, --float-relevance and --strict-road apply to"
                       " -R qrels only", EXIT_USAGE)
    if args.tie_report and (args.format != "trec" or args.ties != "trec_eval"
                            or args.Zscore is not None or args.query_eval_wanted
                            or args.nosummary):
        raise CliError("--tie-report prints its own table (one summary per run): it takes"
                       " neither --format, --ties, -Z, -q nor -n", EXIT_USAGE)
    # Measures are checked before any file is read, as trec_eval does (exit 1 first).
    supported = pytrec_eval_supported if args.semantics == "pytrec_eval" else None
    parse_measures(measures, supported=supported)

    columns = dict(qrels_columns=column_names(args.qrels_columns, "qrels", "--qrels-columns"),
                   run_columns=column_names(args.run_columns, "run", "--run-columns"))
    for option, given, paths in (("--qrels-columns", args.qrels_columns, [args.qrels]),
                                 ("--run-columns", args.run_columns, args.runs)):
        text = [p for p in paths if not is_columnar(p)] if given is not None else []
        if text:
            raise CliError(f"{option} names the columns of Parquet / Arrow IPC files; {text[0]}"
                           " is a TREC text file (its columns are fixed)", EXIT_USAGE)
    if args.label_distributions:
        return _print_expected(args, measures, samples, stdout, stderr, relevance_level=level,
                               max_docs=max_docs, complete=args.complete_rel_info_wanted,
                               semantics=args.semantics, num_docs_in_coll=num_docs,
                               threads=parse_threads(args.threads))
    evaluator = _filled_evaluator(args, measures, relevance_level=level, max_docs=max_docs,
                                  complete=args.complete_rel_info_wanted,
                                  semantics=args.semantics, num_docs_in_coll=num_docs,
                                  threads=parse_threads(args.threads)) if args.fill_from \
        else _evaluator_for(args.Rel_info_format, args.qrels, measures,
                               relevance_level=level, judged_only=args.Judged_docs_only,
                               max_docs=max_docs, complete=args.complete_rel_info_wanted,
                               semantics=args.semantics, num_docs_in_coll=num_docs,
                               **columns, ties="expected" if args.tie_report else args.ties,
                               relevance="float" if args.float_relevance else "int",
                               progress=not args.quiet and is_terminal(stderr),
                               threads=parse_threads(args.threads),
                               strict=args.strict_road,
                               **({"unjudged": "bounds"} if args.bounds else {}))

    if args.tie_report:
        for path in args.runs:
            label = "<stdin>" if path == "-" else path
            report = _evaluate_run(evaluator, path, label, args, report=True)
            missing = report.results["trec_eval"].missing_query_ids
            if len(missing):
                stderr.write(_missing_warning(label, missing))
            stdout.write(f"# {label}\n{report.to_text()}")
        return EXIT_OK
    zscores = read_zscores(args.Zscore) if args.Zscore is not None else None
    per_query, summary = args.query_eval_wanted, not args.nosummary
    blocks = []
    for label, results in _each_run(evaluator, args):
        if args.verbose:
            threads = getattr(evaluator, "threads", 1)
            stderr.write(f"irmetrics eval: {label}: road {results.road or 'memory'}"
                         f" ({threads} thread{'s' if threads != 1 else ''})\n")
        # The skipped queries are the ones the library reports (Results.missing_query_ids);
        # the CLI words the warning itself (the library's is silenced in _evaluate_run).
        missing = results.missing_query_ids
        if len(missing) and args.strict:
            _stop_like_trec_eval(results, zscores, missing[0], args, stdout)
        if zscores is not None:
            results = apply_zscores(results, zscores, path=args.Zscore)
        if len(missing):
            stderr.write(_missing_warning(label, missing))
        if args.format == "trec":
            write_as_read(stdout, trec_text(results, per_query=per_query, summary=summary,
                                            zscore=zscores is not None), results.id_encoding)
        else:
            blocks.append(RunBlock(label, results))
    if args.format == "json":
        stdout.write(render_json(blocks, per_query=per_query, summary=summary))
    elif args.format in ("csv", "tsv"):
        stdout.write(render_delimited(blocks, per_query=per_query, summary=summary,
                                      delimiter="," if args.format == "csv" else "\t"))
    elif args.format == "markdown":
        stdout.write(render_markdown(blocks, per_query=per_query, summary=summary))
    return EXIT_OK


#: ``-R nuggets`` without ``-m``: the run ids, topic counts and nuggetizer's four scores.
NUGGET_DEFAULT = ["runid", "num_q", "nugget_strict_vital", "nugget_strict_all", "nugget_vital",
                  "nugget_all"]


def expected_official() -> list[str]:
    """The ``official`` measures that ``--ties expected`` accepts (the default -m there)."""
    from ..measures.expected import accepted_names
    from ..measures.registry import NICKNAMES

    accepted = set(accepted_names())
    return [name for name in NICKNAMES["official"] if name in accepted]


def bounded_official() -> list[str]:
    """The ``official`` measures that have bounds (the default -m of ``--bounds``)."""
    from ..measures.registry import NICKNAMES
    from ..unjudged import BOUNDED_MEASURES

    return [name for name in NICKNAMES["official"]
            if name.split(".")[0] in BOUNDED_MEASURES]


def _each_run(evaluator, args):
    """``(label, Results)`` of every run given; under ``-R nuggets`` every run of every
    assignment file (``file:run_id`` when a file holds several)."""
    nuggets = False
    if args.Rel_info_format == "nuggets":  # the nugget road is loaded only for it
        from ..rag.evaluate import NuggetEvaluator

        nuggets = isinstance(evaluator, NuggetEvaluator)
    for path in args.runs:
        label = "<stdin>" if path == "-" else path
        if not nuggets:
            yield label, _evaluate_run(evaluator, path, label, args)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)  # worded by the caller
            by_run = evaluator.evaluate_all(path)
        for run, results in by_run.items():
            yield (f"{label}:{run}" if len(by_run) > 1 else label), results
def scored_official() -> list[str]:
    """The ``official`` measures that are per-query scores (the default -m of
    ``--label-distributions``: no counts, no run tag)."""
    from ..measures.registry import NICKNAMES, REGISTRY

    return [name for name in NICKNAMES["official"] if REGISTRY[name].summary == MEAN]


def _check_label_options(args, tie_aware: bool) -> int | None:
    """``--label-samples`` as an int under ``--label-distributions`` (None without it);
    the options it cannot take refused."""
    if not args.label_distributions:
        return label_samples(args, False)  # None; refuses a lone --label-samples
    if (args.bounds or args.fill_from or args.Judged_docs_only or tie_aware
            or args.Rel_info_format != "qrels" or args.Zscore is not None
            or args.float_relevance or args.format != "trec" or args.strict
            or args.qrels_columns is not None or args.run_columns is not None):
        raise CliError("--label-distributions prints its own trec_eval-style lines for -R"
                       " qrels text files: it takes none of --bounds, --fill-from, -J, --ties"
                       " expected, --tie-report, -Z, --float-relevance, --format, --strict,"
                       " --qrels-columns, --run-columns", EXIT_USAGE)
    return label_samples(args, True)


def _print_expected(args, measures, samples, stdout, stderr, **options) -> int:
    """``--label-distributions``: per run, the expected values (per query with ``-q``) and
    their standard errors, then the summary with the intervals over topics."""
    from ..judgment_formats import evaluate_uncertain

    head = "%-22s\t%s\t"
    for path in args.runs:
        label = "<stdin>" if path == "-" else path
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingQueriesWarning)  # worded below
                ex = evaluate_uncertain(args.qrels, args.label_distributions, path, measures,
                                        samples=samples, **options)
        except NoQueriesError as exc:
            raise CliError(f"{label}: {exc}", EXIT_NO_QUERIES) from None
        missing = ex.results.missing_query_ids
        if len(missing):
            stderr.write(_missing_warning(label, missing))
        lines = []
        if args.query_eval_wanted:
            lines.append(trec_text(ex.results, per_query=True, summary=False))
        if not args.nosummary:
            summary = ex.results.aggregate()
            for name in ex.results.names:
                if name.endswith("_se") and name[:-3] in ex.se:
                    continue
                interval = ex.intervals[name]
                outs = [(name, summary[name])]
                # the standard error and interval are the mean's: beside a sum (num_rel_ret)
                # or a geometric mean (gm_map) they would be numbers of another statistic
                if ex.results.measure_of(name).summary == MEAN:
                    outs += [(name + "_se", ex.se[name]),
                             (name + "_ci_low", float(interval.low)),
                             (name + "_ci_high", float(interval.high))]
                for out, value in outs:
                    lines.append(head % (out, "all") + c_double(value) + "\n")
        stdout.write("".join(lines))
    return EXIT_OK


def _evaluate_run(evaluator, path, label, args, *, report=False):
    """Results (or with ``report`` the TieReport) of one run; no common query stops with
    trec_eval's exit 7 (exit 4 under --strict, where trec_eval 10 stops at the first
    qrels query, missing from the run)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MissingQueriesWarning)
            if report:
                from ..meta_evaluation import report_ties

                return report_ties(evaluator, path)
            # A path, not a Run: a plain run file is read chunk by chunk into the engine.
            return evaluator.evaluate(path)
    except NoQueriesError as exc:
        if args.strict and len(evaluator.query_ids):
            raise CliError(f"trec_eval: result qid '{evaluator.query_ids[0]}' not found in"
                           " qrels", EXIT_COMPUTE, verbatim=True) from None
        raise CliError(f"{label}: {exc}", EXIT_NO_QUERIES) from None
    except UserMeasureError as exc:  # which of the runs, when several are given
        raise CliError(f"{label}: {exc}", EXIT_COMPUTE) from exc
    except ParameterError as exc:
        if exc.args and str(exc.args[0]).startswith("`strict`"):  # --strict-road refused
            # The API's "`strict` must be False to read this run whole: WHY; got True." in
            # the CLI's words: the option is a flag, so "must be False" would mislead.
            why = str(exc).split("whole: ", 1)[-1].removesuffix("; got True.")
            raise CliError(f"{label}: --strict-road refuses to read this run whole ({why});"
                           " without --strict-road it is evaluated that way",
                           EXIT_INPUT) from None
        raise


class _FormatEvaluator:
    """``evaluate(run)`` for preference and judgment-group judgments (``-R``)."""

    def __init__(self, evaluate, judgments, measures, **options):
        self._evaluate, self._judgments = evaluate, judgments
        self._measures, self._options = measures, options
        self.query_ids = np.asarray(judgments.df["query_id"].unique().sort().to_list(),
                                    dtype=object)

    def evaluate(self, run):
        return self._evaluate(self._judgments, run, self._measures, **self._options)


def _filled_evaluator(args, measures, **options):
    """``evaluate(run)`` on the qrels filled by ``--fill-from`` (both read once)."""
    from ..judgment_formats import evaluate_filled

    if args.qrels_columns is not None or args.run_columns is not None:
        raise CliError("--fill-from reads TREC qrels files", EXIT_USAGE)
    machine = Qrels.read(args.fill_from)

    def filled(human, run, measures, **kw):
        return evaluate_filled(human, machine, run, measures, **kw)
    return _FormatEvaluator(filled, Qrels.read(args.qrels), measures, **options)


def _evaluator_for(rel_format, path, measures, *, relevance_level, judged_only,
                   max_docs, complete, semantics, num_docs_in_coll, qrels_columns,
                   run_columns, ties="trec_eval", relevance="int", progress=False,
                   threads=None, strict=False, unjudged="zero"):
    """The evaluator of the ``-R`` format: standard qrels (read by the Evaluator, straight
    into the engine when the file is plain), preferences or judgment groups."""
    if rel_format == "qrels":
        return Evaluator(path, measures, relevance_level=relevance_level,
                         judged_only=judged_only, max_docs=max_docs, complete=complete,
                         semantics=semantics, num_docs_in_coll=num_docs_in_coll,
                         qrels_columns=qrels_columns, run_columns=run_columns, ties=ties,
                         relevance=relevance, progress=progress, threads=threads,
                         strict=strict, unjudged=unjudged)
    if qrels_columns is not None or run_columns is not None:
        raise CliError("--qrels-columns and --run-columns need -R qrels (columnar inputs"
                       " hold qrels and runs only)", EXIT_INPUT)
    # Below: judgments other than qrels, whose roads are loaded only when asked for.
    if rel_format == "nuggets":  # nuggetizer's nugget file; the runs are assignments
        from ..rag.evaluate import NuggetEvaluator

        return NuggetEvaluator(path, measures, relevance_level=relevance_level,
                               judged_only=judged_only, max_docs=max_docs, complete=complete,
                               semantics=semantics, ties=ties, relevance=relevance,
                               unjudged=unjudged)
    judgments = read_judgments(path, rel_format)  # an unknown format stops here
    from ..judgment_formats import evaluate_diversity, evaluate_jg, evaluate_prefs

    if rel_format in ("prefs", "qrels_prefs"):
        return _FormatEvaluator(evaluate_prefs, judgments, measures, max_docs=max_docs,
                                complete=complete)
    if rel_format == "diversity":
        return _FormatEvaluator(evaluate_diversity, judgments, measures,
                                relevance_level=relevance_level, judged_only=judged_only,
                                complete=complete)
    return _FormatEvaluator(evaluate_jg, judgments, measures,
                            relevance_level=relevance_level, judged_only=judged_only,
                            max_docs=max_docs, complete=complete)


def _stop_like_trec_eval(results, zscores, first_missing, args, stdout):
    """trec_eval 10 on a qrels query absent from the run: the ``-q`` lines of the
    queries before it are out, then its (inverted) message and exit 4."""
    if args.format == "trec" and args.query_eval_wanted:
        if len(results.query_ids) and results.query_ids[0] < first_missing:
            if zscores is not None:
                results = apply_zscores(results, zscores, path=args.Zscore)
            write_as_read(stdout, trec_text(results, per_query=True, summary=False,
                                            zscore=zscores is not None,
                                            before_query=first_missing), results.id_encoding)
    raise CliError(f"trec_eval: result qid '{first_missing}' not found in qrels",
                   EXIT_COMPUTE, verbatim=True)


def write_as_read(stdout, text: str, id_encoding: str) -> None:
    """Write ``text`` with its ids as the bytes they were read from: a Latin-1 evaluation
    (ids decoded byte by byte, ``Results.id_encoding``) is written back as Latin-1, so
    stdout holds the bytes trec_eval prints. A stream without bytes underneath (a
    StringIO) gets the str."""
    buffer = getattr(stdout, "buffer", None)
    if id_encoding == "utf-8" or buffer is None:
        stdout.write(text)
        return
    stdout.flush()  # keep the order of what was written as text before
    buffer.write(text.encode(id_encoding))
    buffer.flush()


def _missing_warning(label: str, missing) -> str:
    noun = "query has" if len(missing) == 1 else "queries have"
    return (f"irmetrics eval: warning: {label}: {len(missing)} qrels {noun} no results and"
            f" {'was' if len(missing) == 1 else 'were'} not evaluated: {listed_ids(missing)}"
            " (trec_eval 10 stops here with exit 4, as --strict does; -c evaluates them on"
            " trec_eval's placeholder ranking)\n")
