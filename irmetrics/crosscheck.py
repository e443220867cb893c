"""Compare irmetrics with pytrec_eval on the same inputs, output by output.

Both sides receive the same ``{query_id: {doc_id: value}}`` dicts, irmetrics evaluates
them under ``semantics="pytrec_eval"`` (pytrec-eval-terrier 0.5.11 = trec_eval 9.0.8),
and every per-query value is compared. pytrec_eval is imported lazily: it is only
needed here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from .checks import check_float, check_int
from .evaluate import Evaluator, as_qrels, as_run
from .exceptions import ParameterError
from .measures.params import DoubleCutoffs, LongCutoffs
from .measures.parse import parse_measures
from .measures.registry import NUM_Q, REGISTRY, RUNID, STRING
from .results import listed_ids

__all__ = ["crosscheck", "CrossCheckReport", "OutputComparison", "default_measures"]

#: Default tolerance: irmetrics promises pytrec_eval parity to 1e-9.
TOLERANCE = 1e-9

#: Parameter strings pytrec_eval's wrapper accepts after ``measure.`` (its own regex).
_PYTREC_PARAMS = re.compile(r"[0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*\Z")


@dataclass
class OutputComparison:
    """One output name compared over the queries both libraries evaluated.

    ``max_abs_diff`` is ``inf`` when one side is NaN and the other is not (both NaN
    counts as equal); ``differing`` lists the query ids whose difference exceeds the
    tolerance, in byte order.
    """

    name: str
    pytrec_eval_name: str
    n_queries: int
    max_abs_diff: float
    differing: list = field(default_factory=list)


@dataclass
class CrossCheckReport:
    """Result of :func:`crosscheck`.

    Attributes
    ----------
    outputs : list of OutputComparison
        In trec_eval's print order.
    skipped : list of (name, reason)
        Outputs that are not compared: string outputs (``relstring``) and the
        bookkeeping outputs ``runid`` and ``num_q``, whose per-query values are
        placeholders.
    only_irmetrics, only_pytrec_eval : list of str
        Query ids evaluated by one library only (should be empty).
    excluded : list of str
        Qrels queries left out of the comparison because every judgment is negative:
        trec_eval 9.0.8 then reads label counts left over from the previous query
        (undefined behaviour, docs/reference/trec_eval.md §10 #22), and pytrec_eval can hang or crash.
    tolerance : float
    missing : list of str
        Qrels queries absent from the run: neither library evaluates them.
    """

    outputs: list
    skipped: list
    only_irmetrics: list
    only_pytrec_eval: list
    excluded: list = field(default_factory=list)
    tolerance: float = TOLERANCE
    missing: list = field(default_factory=list)

    @property
    def n_compared(self) -> int:
        """Number of (query, output) values compared."""
        return sum(o.n_queries for o in self.outputs)

    @property
    def ok(self) -> bool:
        """True when every output agrees within the tolerance on the same queries, and
        at least one value was compared (an empty comparison proves nothing)."""
        return (self.n_compared > 0 and not self.only_irmetrics and not self.only_pytrec_eval
                and all(not o.differing for o in self.outputs))

    def format(self) -> str:
        """One line per output, then the differing query sets and a verdict."""
        lines = []
        for o in self.outputs:
            status = "no query compared" if not o.n_queries else "ok" if not o.differing else (
                f"DIFFERS in {len(o.differing)} quer{'y' if len(o.differing) == 1 else 'ies'}: "
                + ", ".join(o.differing[:10]) + (" ..." if len(o.differing) > 10 else ""))
            name = o.name if o.name == o.pytrec_eval_name else \
                f"{o.name} ({o.pytrec_eval_name})"
            lines.append(f"{name:<22}\tmax_abs_diff {o.max_abs_diff:.3e}\tqueries"
                         f" {o.n_queries}\t{status}")
        for name, reason in self.skipped:
            lines.append(f"{name:<22}\tskipped: {reason}")
        if self.excluded:
            lines.append("queries not compared (every judgment negative, undefined in"
                         " trec_eval 9.0.8): " + ", ".join(self.excluded))
        if self.missing:
            lines.append("qrels queries absent from the run, evaluated by neither: "
                         + listed_ids(self.missing, 10))
        if self.only_irmetrics:
            lines.append("queries evaluated by irmetrics only: " + ", ".join(self.only_irmetrics))
        if self.only_pytrec_eval:
            lines.append("queries evaluated by pytrec_eval only: "
                         + ", ".join(self.only_pytrec_eval))
        bad = sum(1 for o in self.outputs if o.differing)
        if self.ok:
            lines.append(f"OK: {len(self.outputs)} outputs agree within {self.tolerance:g}"
                         f" ({self.n_compared} values compared)")
        elif self.n_compared == 0:
            why = ("no numeric output to compare" if not self.outputs else
                   "no query left once the excluded ones are out" if self.excluded else
                   "the qrels and the run have no query in common")
            lines.append(f"FAIL: nothing was compared: {why}")
        else:
            lines.append(f"FAIL: {bad} of {len(self.outputs)} outputs differ by more than"
                         f" {self.tolerance:g}" + ("; query sets differ" if
                                                    self.only_irmetrics or self.only_pytrec_eval
                                                    else ""))
        return "\n".join(lines) + "\n"


def default_measures() -> list[str]:
    """Every registered measure pytrec_eval supports, with default parameters."""
    return [m.name for m in sorted(REGISTRY.values(), key=lambda m: m.order) if m.pytrec_eval]


def _pytrec_spec(req) -> str:
    """The measure string pytrec_eval's wrapper understands for one request."""
    m = req.measure
    if req.raw is None:
        return m.name
    if isinstance(m.params, LongCutoffs):
        return f"{m.name}.{','.join(str(k) for k in req.params)}"
    if isinstance(m.params, DoubleCutoffs) and all(p >= 0 for p in req.params):
        # Positional shortest round-trip digits: pytrec_eval's wrapper rejects exponents.
        return f"{m.name}.{','.join(np.format_float_positional(p, trim='-') for p in req.params)}"
    if _PYTREC_PARAMS.match(req.raw):
        return f"{m.name}.{req.raw}"
    raise ParameterError(f"pytrec_eval cannot express the parameters of {m.name}.{req.raw};"
                         " choose parameters of the form 5,10 or 0.5")


def _buckets(requests):
    """Split requests so that no pytrec_eval evaluator gets one measure twice (its wrapper
    would merge ``P`` and ``P.7`` into ``P.7``) and each has one relevance level."""
    buckets: list = []
    for req in requests:
        level, judged = req.relevance_level, req.judged_only
        for b in buckets:
            if (b["level"], b["judged"]) == (level, judged) and req.measure.name not in b["names"]:
                break
        else:
            b = {"level": level, "judged": judged, "names": set(), "requests": []}
            buckets.append(b)
        b["names"].add(req.measure.name)
        b["requests"].append(req)
    return buckets


def crosscheck(qrels, run, measures=None, *, relevance_level=1, judged_only=False,
               tolerance=TOLERANCE) -> CrossCheckReport:
    """Evaluate with irmetrics and with pytrec_eval and compare every per-query value.

    Parameters
    ----------
    qrels, run : Qrels/Run, path, dict or DataFrame
        Converted once to pytrec_eval's dicts, which both libraries then receive.
    measures : str or list of str, optional
        trec_eval or friendly names; default :func:`default_measures`.
    relevance_level : int >= 1, default 1
        pytrec_eval's ``relevance_level`` (it accepts no level below 1).
    judged_only : bool, default False
        pytrec_eval's ``judged_docs_only_flag``.
    tolerance : float >= 0, default 1e-9
        Finite: NaN or infinity would accept any difference.

    Returns
    -------
    CrossCheckReport
        ``.ok`` is True when ``|irmetrics - pytrec_eval| <= tolerance`` for every output
        and query, both evaluated the same queries, and at least one value was compared.

    Examples
    --------
    >>> rep = crosscheck({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.2, "d2": 0.9}},
    ...                  ["map", "P.1,2"])
    >>> rep.ok, [o.name for o in rep.outputs]
    (True, ['map', 'P_1', 'P_2'])
    """
    try:
        import pytrec_eval
    except ImportError:  # pragma: no cover - pytrec_eval is a declared dependency
        raise ImportError("crosscheck needs pytrec_eval: pip install pytrec-eval-terrier") \
            from None
    # pytrec_eval refuses levels below 1 ("relevance_level should be positive").
    check_int("relevance_level", relevance_level, min=1)
    tolerance = check_float("tolerance", tolerance, min=0)
    measures = default_measures() if measures is None else measures
    qrels_dict = as_qrels(qrels).to_dict()
    run_dict = as_run(run).to_dict()
    excluded = sorted(q for q, docs in qrels_dict.items()
                      if docs and all(label < 0 for label in docs.values()))
    for q in excluded:
        del qrels_dict[q]
    requests = parse_measures(measures, supported=lambda m: m.pytrec_eval)

    # Unchecked: no common query gives an empty comparison, reported as such (not ok).
    ours = Evaluator(qrels_dict, measures, relevance_level=relevance_level,
                     judged_only=judged_only, semantics="pytrec_eval",
                     ).evaluate_unchecked(run_dict)
    theirs: dict = {}  # irmetrics output name -> (pytrec name, {qid: value})
    for bucket in _buckets(requests):
        level = relevance_level if bucket["level"] is None else bucket["level"]
        judged = judged_only if bucket["judged"] is None else bucket["judged"]
        specs = {_pytrec_spec(r) for r in bucket["requests"]}
        try:
            evaluator = pytrec_eval.RelevanceEvaluator(
                qrels_dict, specs, relevance_level=level, judged_docs_only_flag=judged)
        except (ValueError, TypeError) as exc:
            raise ParameterError(f"pytrec_eval rejected measures {sorted(specs)}: {exc}") \
                from None
        result = evaluator.evaluate(run_dict)
        sample = next(iter(result.values()), {})
        for req in bucket["requests"]:
            m = req.measure
            trec_names = m.params.output_names(m.name, req.params, req.raw)
            for ours_name, trec_name in zip(req.output_names, trec_names):
                # pytrec_eval reports double/pair-parameter measures under the bare name.
                name = trec_name if trec_name in sample or not sample else m.name
                theirs[ours_name] = (name, {q: v[name] for q, v in result.items() if name in v})

    our_queries = list(ours.query_ids)
    their_queries = {q for _, values in theirs.values() for q in values}
    common = [q for q in our_queries if q in their_queries]
    index = {q: i for i, q in enumerate(our_queries)}
    rows = np.asarray([index[q] for q in common], dtype=np.int64)
    outputs, skipped = [], []
    for name in ours.names:
        spec = ours.measure_of(name)
        if spec.printed == STRING:
            skipped.append((name, "string output"))
            continue
        if spec.summary in (RUNID, NUM_Q):
            skipped.append((name, "bookkeeping output, no per-query value"))
            continue
        their_name, values = theirs[name]
        a = np.asarray(ours.values(name), dtype=np.float64)[rows]
        b = np.asarray([values.get(q, math.nan) for q in common], dtype=np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        with np.errstate(invalid="ignore"):
            diff = np.where(both_nan, 0.0, np.abs(a - b))
        diff = np.where(np.isnan(diff), np.inf, diff)
        bad = diff > tolerance
        outputs.append(OutputComparison(
            name=name, pytrec_eval_name=their_name, n_queries=len(common),
            max_abs_diff=float(diff.max()) if len(diff) else 0.0,
            differing=[common[i] for i in np.flatnonzero(bad)]))
    return CrossCheckReport(
        outputs=outputs, skipped=skipped,
        only_irmetrics=[q for q in our_queries if q not in their_queries],
        only_pytrec_eval=sorted(their_queries - set(our_queries)),
        excluded=excluded, tolerance=tolerance, missing=list(ours.missing_query_ids))
