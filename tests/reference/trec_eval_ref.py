"""Slow, plainly correct reference implementation of trec_eval 10.0.

This module is the oracle that the vectorised irmetrics engine is
differential-tested against.  It lives only in the tests tree and is never
imported by the package.  It follows ``docs/reference/trec_eval.md``
(the behavioural spec) section by section, with per-query Python loops,
``math.log2``/``math.log``/``math.exp`` (libm), sequential float sums in
rank order and a single final division, exactly as the spec prescribes.

Two semantics are offered:

``semantics="trec_eval"`` (default)
    trec_eval 10.0 (``VERSIONID 10.0-rc3``).

``semantics="pytrec_eval"``
    trec_eval 9.0.8 as bundled by pytrec_eval-terrier 0.5.11, i.e. what
    ``pytrec_eval.RelevanceEvaluator(...).evaluate(run)`` returns:

    * scores are rounded to float32 before ranking (ties then fall through to
      the docno-descending tie-break);
    * iprec_at_recall and 11pt_avg cutoffs are ``(long)(p*R + 0.9)`` instead
      of ``lround(p*R)``;
    * rbp, rbp_resid, unj, yaap, dcg and ideal_dcg are unsupported
      (``ValueError``), and the ``all_trec`` nickname does not contain them;
    * per-query values of runid and relstring are ``0.0``, num_q is ``1.0``,
      gm_map / gm_bpref are ``ln(max(v, 1e-5))``;
    * a qrels query with an empty judgment dict is absent from the result
      (the pytrec_eval wrapper filters it out), while a run query whose
      ranking is ``{}`` is evaluated with ``n = 0``;
    * measures with double or pair parameters are reported under their bare
      name (``set_F``, ``ndcg``, ``utility``, ``11pt_avg``, ``relstring``),
      never ``set_F_0.5``; cutoff measures keep ``P_5`` / ``iprec_at_recall_0.10``;
    * gain-table pair names are converted with ``atol`` (9.0.8 has no
      integer validity check), so ``ndcg.a=2`` gives level 0 the gain 2,
      whereas trec_eval 10 ignores the pair (spec section 4.2).

    These rules were verified by experiment against the real ``pytrec_eval``
    module (see ``tests/measures/test_reference_vs_pytrec_eval.py``).  Further
    pytrec_eval 0.5.11 findings, not in the spec:

    * ``relevance_level=0`` raises ``TypeError("Argument relevance_level should
      be positive.")``; negative levels give wrong values or segfault.  The
      reference raises ValueError for ``relevance_level < 1`` here.
    * pytrec_eval segfaults with bpref/gm_bpref plus another measure when the
      first query it evaluates retrieves nothing (after -J) or has only
      negative judgments (qrels ``{"2": {"d1": 1}}``, run
      ``{"2": {}, "5": {"a": 1.0}}``, measures ``{"bpref", "map"}``).
    * Its Python wrapper cannot pass pair parameters (``ndcg.1=3,2=9`` is
      cut to ``ndcg.1``, then the extension aborts), negative doubles or
      ``iprec_at_recall..15,.55``, and it sorts/de-duplicates parameters as
      strings (so ``11pt_avg.0.5,0.2`` arrives as ``0.2,0.5``).  The
      extension class ``pytrec_eval_ext.RelevanceEvaluator`` takes the
      trec_eval spelling unchanged and keeps 11pt_avg's parameter order.

Per-query value conventions of :class:`Reference` (both semantics): every
output name of ``order`` appears in every ``per_query[qid]`` dict.  gm_map and
gm_bpref hold the accumulated log value ``ln(max(v, 1e-5))``; num_q holds
``1.0``; runid holds the run id string (``0.0`` under pytrec_eval);
relstring holds the string (``0.0`` under pytrec_eval).  Only the lines that
trec_eval prints are emitted by :meth:`Reference.format_trec`.

Query-set policy (irmetrics' documented default, differs from trec_eval 10
which stops with a fatal error): a qrels query absent from the run is skipped
and recorded in ``Reference.missing`` unless ``complete=True`` (``-c``), in
which case the bogus one-document ranking of spec section 4.4 is used.  A qrels
query whose judgments are all negative (or, under trec_eval semantics, an
empty judgment dict) is evaluated as a query with zero judged levels
(spec section 10, #22/#23 recommendation).  Run queries absent from the qrels
are ignored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy

__all__ = ["evaluate", "Reference", "parse_measures", "atol", "atof"]

SEMANTICS = ("trec_eval", "pytrec_eval")

#: docno of the bogus document used for ``-c`` (spec section 4.4).
BOGUS_DOCNO = "ceci_nest_pas_un_docno"

#: relevance codes of retrieved documents that are not judged (spec 3.3).
NONPOOL = -1
UNJUDGED = -2

#: floor used by the geometric-mean measures (trec_eval MIN_GEO_MEAN).
MIN_GEO_MEAN = 0.00001

NEG_NAN = math.copysign(math.nan, -1.0)


# ---------------------------------------------------------------------------
# C numeric helpers
# ---------------------------------------------------------------------------

def div(a, b):
    """IEEE double division ``a / b`` as x86-64 C performs it.

    Python raises on a zero divisor; C gives ``+-inf`` for ``x/0`` and the
    x86 default NaN (sign bit set, printed ``-nan``) for ``0/0``.
    """
    a = float(a)
    b = float(b)
    if b != 0.0:
        return a / b
    if math.isnan(a):
        return a
    if a == 0.0:
        return NEG_NAN
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def c_max(a, b):
    """C macro ``MAX(a, b)`` = ``a > b ? a : b`` (NaN compares false)."""
    return a if a > b else b


def c_long(x):
    """C ``(long) x`` for a double: truncation toward zero."""
    return int(math.trunc(x))


def lround(x):
    """C ``lround``: round half away from zero."""
    ax = abs(x)
    f = math.floor(ax)
    r = f + (1 if ax - f >= 0.5 else 0)
    return int(r) if x >= 0 else -int(r)


_C_SPACE = " \t\n\v\f\r"


def atol(s):
    """C ``atol``: skip C whitespace, optional sign, decimal digits; else 0."""
    i = 0
    while i < len(s) and s[i] in _C_SPACE:
        i += 1
    sign = 1
    if i < len(s) and s[i] in "+-":
        sign = -1 if s[i] == "-" else 1
        i += 1
    j = i
    while j < len(s) and s[j] in "0123456789":
        j += 1
    return sign * int(s[i:j]) if j > i else 0


_HEX_RE = re.compile(
    r"0[xX]((?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)")
_DEC_RE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INF_NAN_RE = re.compile(r"(infinity|inf|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)


def atof(s):
    """C ``atof``/``strtod``: value of the longest valid floating prefix, else 0.0."""
    i = 0
    while i < len(s) and s[i] in _C_SPACE:
        i += 1
    sign = 1.0
    if i < len(s) and s[i] in "+-":
        sign = -1.0 if s[i] == "-" else 1.0
        i += 1
    rest = s[i:]
    m = _HEX_RE.match(rest)
    if m:
        return sign * float.fromhex("0x" + m.group(1))
    m = _INF_NAN_RE.match(rest)
    if m:
        word = m.group(1).lower()
        return sign * (math.nan if word.startswith("nan") else math.inf)
    m = _DEC_RE.match(rest)
    if m:
        return sign * float(m.group(0))
    return 0.0


# ---------------------------------------------------------------------------
# Measure table (spec section 5, rows 1-36 and 54-57)
# ---------------------------------------------------------------------------

# Parameter types of spec section 4.2.
NONE, LONG_CUT, DOUBLE_CUT = "none", "long_cut", "double_cut"
DOUBLE_PARAM, PAIR = "double_param", "pair"

# Printing/aggregation kinds.
K_RUNID = "runid"      # summary only, string
K_NUMQ = "num_q"       # summary only, %ld
K_LONG = "long"        # per query %ld, summary sum %ld
K_DOUBLE = "double"    # per query %6.4f, summary mean %6.4f
K_GM = "gm"            # summary only, geometric mean %6.4f
K_STR = "str"          # per query only, quoted string

_IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_PREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class MeasureDef:
    row: int
    name: str
    ptype: str
    kind: str
    default: tuple = ()


MEASURES = {
    m.name: m
    for m in [
        MeasureDef(1, "runid", NONE, K_RUNID),
        MeasureDef(2, "num_q", NONE, K_NUMQ),
        MeasureDef(3, "num_ret", NONE, K_LONG),
        MeasureDef(4, "num_rel", NONE, K_LONG),
        MeasureDef(5, "num_rel_ret", NONE, K_LONG),
        MeasureDef(6, "map", NONE, K_DOUBLE),
        MeasureDef(7, "gm_map", NONE, K_GM),
        MeasureDef(8, "Rprec", NONE, K_DOUBLE),
        MeasureDef(9, "bpref", NONE, K_DOUBLE),
        MeasureDef(10, "recip_rank", NONE, K_DOUBLE),
        MeasureDef(11, "iprec_at_recall", DOUBLE_CUT, K_DOUBLE, _IPREC_LEVELS),
        MeasureDef(12, "P", LONG_CUT, K_DOUBLE, _PREC_CUTOFFS),
        MeasureDef(13, "relstring", DOUBLE_PARAM, K_STR, (10.0,)),
        MeasureDef(14, "recall", LONG_CUT, K_DOUBLE, _PREC_CUTOFFS),
        MeasureDef(15, "infAP", NONE, K_DOUBLE),
        MeasureDef(16, "gm_bpref", NONE, K_GM),
        MeasureDef(17, "Rprec_mult", DOUBLE_CUT, K_DOUBLE,
                   (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
        MeasureDef(18, "utility", DOUBLE_PARAM, K_DOUBLE, (1.0, -1.0, 0.0, 0.0)),
        MeasureDef(19, "11pt_avg", DOUBLE_PARAM, K_DOUBLE, _IPREC_LEVELS),
        MeasureDef(20, "binG", NONE, K_DOUBLE),
        MeasureDef(21, "G", PAIR, K_DOUBLE),
        MeasureDef(22, "dcg", PAIR, K_DOUBLE),
        MeasureDef(23, "ideal_dcg", PAIR, K_DOUBLE),
        MeasureDef(24, "ndcg", PAIR, K_DOUBLE),
        MeasureDef(25, "ndcg_rel", PAIR, K_DOUBLE),
        MeasureDef(26, "Rndcg", PAIR, K_DOUBLE),
        MeasureDef(27, "ndcg_cut", LONG_CUT, K_DOUBLE, _PREC_CUTOFFS),
        MeasureDef(28, "map_cut", LONG_CUT, K_DOUBLE, _PREC_CUTOFFS),
        MeasureDef(29, "relative_P", LONG_CUT, K_DOUBLE, _PREC_CUTOFFS),
        MeasureDef(30, "success", LONG_CUT, K_DOUBLE, (1, 5, 10)),
        MeasureDef(31, "set_P", NONE, K_DOUBLE),
        MeasureDef(32, "set_relative_P", NONE, K_DOUBLE),
        MeasureDef(33, "set_recall", NONE, K_DOUBLE),
        MeasureDef(34, "set_map", NONE, K_DOUBLE),
        MeasureDef(35, "set_F", DOUBLE_PARAM, K_DOUBLE, (1.0,)),
        MeasureDef(36, "num_nonrel_judged_ret", NONE, K_LONG),
        MeasureDef(54, "yaap", NONE, K_DOUBLE),
        MeasureDef(55, "rbp", PAIR, K_DOUBLE),
        MeasureDef(56, "rbp_resid", PAIR, K_DOUBLE),
        MeasureDef(57, "unj", LONG_CUT, K_DOUBLE, (5, 10, 20)),
    ]
}

#: Measures that trec_eval 9.0.8 / pytrec_eval-terrier 0.5.11 does not have.
PYTREC_UNSUPPORTED = frozenset({"rbp", "rbp_resid", "unj", "yaap", "dcg", "ideal_dcg"})

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
             "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F")
_ALL_TREC = tuple(name for name in MEASURES if name not in ("yaap", "dcg", "ideal_dcg"))

NICKNAMES = {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC}
#: Nicknames of trec_eval whose members this reference does not implement.
UNSUPPORTED_NICKNAMES = ("all_prefs", "prefs", "qrels_jg")

#: dcg, ideal_dcg and ndcg share one parameter block in trec_eval (spec 8.1).
SHARED_GAIN_BLOCK = ("dcg", "ideal_dcg", "ndcg")


@dataclass
class MeasureInstance:
    """A requested measure after parameter parsing (trec_eval's init step)."""

    mdef: MeasureDef
    param_string: str | None           # as typed; None when defaults are used
    params: list                       # parsed parameters (cutoffs, doubles or pairs)
    names: list                        # printed output names, one per value


def _parse_pairs(name, s):
    seps = [c for c in s if c in "=,"]
    ok = bool(seps) and seps[0] == "=" and seps[-1] == "=" and all(
        c == ("=" if k % 2 == 0 else ",") for k, c in enumerate(seps))
    if not ok:
        raise ValueError(f"trec_eval: malformed pair parameters in '{s}' "
                         f"(Cannot initialize measure '{name}')")
    pairs = []
    for item in s.split(","):
        key, _, value = item.partition("=")
        pairs.append((key, atof(value)))
    return pairs


def _init_measure(mdef, param_string, semantics):
    """Parse one measure's parameter string (spec 4.2) into a MeasureInstance."""
    name = mdef.name
    if mdef.ptype == NONE:
        # Parameters given to a parameterless measure are stored and never used.
        return MeasureInstance(mdef, param_string, [], [name])
    if mdef.ptype == LONG_CUT:
        if param_string is None:
            cutoffs = list(mdef.default)
        else:
            cutoffs = sorted(atol(item) for item in param_string.split(","))
            if cutoffs[0] <= 0:
                raise ValueError(f"trec_eval: Negative cutoff detected "
                                 f"(Cannot initialize measure '{name}')")
            if any(a == b for a, b in zip(cutoffs, cutoffs[1:])):
                raise ValueError(f"trec_eval: duplicate cutoffs detected "
                                 f"(Cannot initialize measure '{name}')")
        return MeasureInstance(mdef, param_string, cutoffs,
                               [f"{name}_{c:d}" for c in cutoffs])
    if mdef.ptype == DOUBLE_CUT:
        if param_string is None:
            cutoffs = list(mdef.default)
        else:
            cutoffs = sorted(atof(item) for item in param_string.split(","))
            if any(a == b for a, b in zip(cutoffs, cutoffs[1:])):
                raise ValueError(f"trec_eval: duplicate cutoffs detected "
                                 f"(Cannot initialize measure '{name}')")
        return MeasureInstance(mdef, param_string, cutoffs,
                               [f"{name}_{_c_fmt('%3.2f', c)}" for c in cutoffs])
    bare = param_string is None or semantics == "pytrec_eval"
    out_name = name if bare else f"{name}_{param_string}"
    if mdef.ptype == DOUBLE_PARAM:
        if param_string is None:
            values = list(mdef.default)
        else:
            values = [atof(item) for item in param_string.split(",")]
        return MeasureInstance(mdef, param_string, values, [out_name])
    assert mdef.ptype == PAIR
    pairs = [] if param_string is None else _parse_pairs(name, param_string)
    return MeasureInstance(mdef, param_string, pairs, [out_name])


def parse_measures(specs, semantics="trec_eval"):
    """Parse trec_eval ``-m`` specifications into MeasureInstances in table order.

    Implements spec section 4.2: split at the first '.', nicknames mark all
    their members, the first parameter string supplied for a name wins,
    output is always in table order.  Bad specs raise ValueError.
    """
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {SEMANTICS}; got {semantics!r}")
    if isinstance(specs, str):
        raise ValueError("measures must be a list of -m specifications, not a str")
    requested = set()
    first_params = {}
    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"measure spec must be a str; got {spec!r}")
        name, dot, params = spec.partition(".")
        if dot and params == "":
            raise ValueError(f"trec_eval: improper measure in parameter '{name}' "
                             f"(illegal measure '{name}')")
        if name in NICKNAMES:
            members = NICKNAMES[name]
            if semantics == "pytrec_eval":
                members = [m for m in members if m not in PYTREC_UNSUPPORTED]
            requested.update(members)
        elif name in MEASURES:
            if semantics == "pytrec_eval" and name in PYTREC_UNSUPPORTED:
                raise ValueError(f"unsupported measure {name} under semantics='pytrec_eval'")
            requested.add(name)
        elif name in UNSUPPORTED_NICKNAMES:
            raise ValueError(f"nickname '{name}' is not implemented by this reference")
        else:
            raise ValueError(f"trec_eval: illegal measure '{name}'")
        if dot and name not in first_params:
            first_params[name] = params

    block = [m for m in SHARED_GAIN_BLOCK if m in requested]
    if len({first_params.get(m) for m in block}) > 1:
        raise ValueError(
            "dcg, ideal_dcg and ndcg share one parameter block in trec_eval; requesting "
            f"them with differing parameters ({', '.join(block)}) crashes the reference")

    instances = []
    for mdef in sorted((MEASURES[m] for m in requested), key=lambda d: d.row):
        instances.append(_init_measure(mdef, first_params.get(mdef.name), semantics))
    return instances


# ---------------------------------------------------------------------------
# Per-query rel list (spec section 3)
# ---------------------------------------------------------------------------

def _bytes(s):
    return s.encode("utf-8")


@dataclass
class QueryData:
    """Everything the measures of one query read (spec sections 3.3 to 3.6)."""

    codes: list          # r_1..r_n
    L: int               # relevance level
    levels: list         # levels[k] for k = 0..nlev-1
    R: int
    NR: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged: int
    num_docs_in_coll: int

    @property
    def n(self):
        return len(self.codes)

    @property
    def nlev(self):
        return len(self.levels)

    def rel(self, i):
        """rel(i) for 1-based rank i: r_i >= L."""
        return self.codes[i - 1] >= self.L

    def relat(self, k):
        """Relevant retrieved in the top k (padding counts as non-relevant)."""
        return sum(1 for c in self.codes[:max(k, 0)] if c >= self.L)


def rank_documents(ranking, semantics):
    """Sort (docno, score) by score descending, then docno descending (bytes)."""
    items = []
    for docno, score in ranking.items():
        score = float(score)
        if semantics == "pytrec_eval":
            score = float(numpy.float32(score))
        if math.isnan(score):
            raise ValueError(f"NaN score for document {docno!r}: trec_eval's order is undefined")
        items.append((score, _bytes(docno), docno))
    items.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [docno for _, _, docno in items]


def build_query(judgments, ranking, *, L, max_docs, judged_only, semantics,
                num_docs_in_coll):
    ordered = rank_documents(ranking, semantics)
    if max_docs is not None:
        ordered = ordered[:max_docs]
    codes = []
    for docno in ordered:
        if docno not in judgments:
            codes.append(NONPOOL)
        elif judgments[docno] < 0:
            codes.append(UNJUDGED)
        else:
            codes.append(judgments[docno])
    if judged_only:
        codes = [c for c in codes if c >= 0]
    judged = [v for v in judgments.values() if v >= 0]
    nlev = (max(judged) + 1) if judged else 0
    levels = [0] * nlev
    for v in judged:
        levels[v] += 1
    R = sum(levels[k] for k in range(nlev) if k >= L)
    NR = sum(levels[k] for k in range(nlev) if k < L)
    return QueryData(
        codes=codes, L=L, levels=levels, R=R, NR=NR,
        num_rel_ret=sum(1 for c in codes if c >= 0 and c >= L),
        num_nonpool=sum(1 for c in codes if c == NONPOOL),
        num_unjudged=sum(1 for c in codes if c == UNJUDGED),
        num_docs_in_coll=num_docs_in_coll,
    )


# ---------------------------------------------------------------------------
# Gain table and ideal cursor (spec section 8.0)
# ---------------------------------------------------------------------------

@dataclass
class GainEntry:
    level: int
    gain: float
    count: int


_VALID_INT = re.compile(r"[+-]?[0-9]+")


def _glibc_msort(items, cmp):
    """glibc 2.36 qsort: stable top-down merge sort (split at n/2, left wins on <= 0)."""
    n = len(items)
    if n <= 1:
        return list(items)
    n1 = n // 2
    left = _glibc_msort(items[:n1], cmp)
    right = _glibc_msort(items[n1:], cmp)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def _comp_rel_gain(a, b):
    # C: return (int)(a->gain - b->gain); the difference is truncated to int.
    return c_long(a.gain - b.gain)


def build_gain_table(q, pairs, semantics):
    """Sorted gain table of spec 8.0 for one query."""
    entries = []
    for name, value in pairs:
        if semantics == "trec_eval":
            if not _VALID_INT.fullmatch(name):
                continue          # v10 ignores non-integer names silently
            level = int(name)
        else:
            level = atol(name)    # 9.0.8: atol, no validity check
        entries.append(GainEntry(level, float(value), 0))
    for k in range(q.nlev):
        for e in entries:
            if e.level == k:
                e.count = q.levels[k]
                break
        else:
            entries.append(GainEntry(k, float(k), q.levels[k]))
    return _glibc_msort(entries, _comp_rel_gain)


def gain_of(table, code):
    """gain(code): first entry in sorted order with that level, else 0.0."""
    for e in table:
        if e.level == code:
            return e.gain
    return 0.0


class IdealCursor:
    """The C walk over the sorted gain table from the highest index down.

    ``gain`` is the current ideal gain; ``advance()`` moves to the next ideal
    position (skipping exhausted entries) and returns ``ideal_at(i)``.
    """

    def __init__(self, table):
        self.table = table
        self.index = len(table) - 1
        self.used = 0
        self.gain = table[self.index].gain if self.index >= 0 else 0.0

    def advance(self):
        self.used += 1
        while self.index >= 0 and self.used > self.table[self.index].count:
            self.used = 1
            self.index -= 1
            self.gain = self.table[self.index].gain if self.index >= 0 else 0.0
        return self.gain


def ideal_gains(table):
    """I_1, I_2, ...: the positive gains emitted by the ideal walk."""
    cursor = IdealCursor(table)
    out = []
    while cursor.gain > 0.0:
        g = cursor.advance()
        if g > 0.0:
            out.append(g)
    return out


# ---------------------------------------------------------------------------
# Measures (spec section 8.1), one function each, in table order
# ---------------------------------------------------------------------------

def _ap_sum(q, upto=None):
    """(Σ_{i<=upto, rel(i)} relat(i)/i, number of rel(i)) in rank order."""
    limit = q.n if upto is None else min(upto, q.n)
    rel_so_far = 0
    s = 0.0
    for i in range(1, limit + 1):
        if q.rel(i):
            rel_so_far += 1
            s += rel_so_far / i
    return s, rel_so_far


def m_map(q):
    s, rel_so_far = _ap_sum(q)
    return div(s, q.R) if rel_so_far else 0.0


def m_gm(v):
    return math.log(c_max(v, MIN_GEO_MEAN))


def m_Rprec(q):
    m = min(q.n, q.R)
    if m == 0:
        return 0.0
    return div(q.relat(m), q.R)


def m_bpref(q):
    nonrel_so_far = 0
    s = 0.0
    for c in q.codes:
        if c == NONPOOL or c == UNJUDGED:
            continue
        if c >= q.L:
            if nonrel_so_far > 0:
                s += 1.0 - div(min(nonrel_so_far, q.R), min(q.NR, q.R))
            else:
                s += 1.0
        else:
            nonrel_so_far += 1
    return div(s, q.R) if q.R > 0 else 0.0


def m_recip_rank(q):
    for i in range(1, q.n + 1):
        if q.rel(i):
            return 1.0 / i
    return 0.0


def _interpolated_sum(q, cutoffs, sink):
    """The reverse scan shared by iprec_at_recall and 11pt_avg (spec 8.1).

    ``cutoffs`` are relevant-document counts, in parameter order.  ``sink(idx,
    value)`` receives each assigned value, in descending index order.
    """
    K = q.num_rel_ret
    cur = len(cutoffs) - 1
    while cur >= 0 and cutoffs[cur] > K:
        cur -= 1
    ip = div(K, q.n)
    cnt = K
    i = q.n
    while i > 0 and cnt > 0:
        precis = cnt / i
        if ip < precis:
            ip = precis
        if q.rel(i):
            while cur >= 0 and cutoffs[cur] == cnt:
                sink(cur, ip)
                cur -= 1
            cnt -= 1
        i -= 1
    while cur >= 0:
        sink(cur, ip)
        cur -= 1


def _recall_cutoff(p, R, semantics):
    if semantics == "pytrec_eval":
        return c_long(p * R + 0.9)     # trec_eval 9.0.8
    return lround(p * R)               # trec_eval 10.0


def m_iprec_at_recall(q, levels, semantics):
    cutoffs = [_recall_cutoff(p, q.R, semantics) for p in levels]
    values = [0.0] * len(levels)

    def sink(idx, value):
        values[idx] = value

    _interpolated_sum(q, cutoffs, sink)
    return values


def m_P(q, cutoffs):
    return [q.relat(k) / k for k in cutoffs]


_RELSTRING_CHARS = {NONPOOL: "-", UNJUDGED: "."}


def m_relstring(q, params):
    length = c_long(params[0])
    chars = []
    for c in q.codes[:max(length, 0)]:
        if c in _RELSTRING_CHARS:
            chars.append(_RELSTRING_CHARS[c])
        elif c > 9:
            chars.append(">")
        else:
            chars.append(str(c))
    return "".join(chars)


def m_recall(q, cutoffs):
    if q.R == 0:
        return [0.0] * len(cutoffs)
    return [q.relat(k) / q.R for k in cutoffs]


INFAP_EPSILON = 0.00001


def m_infAP(q):
    rel_so_far = nonrel_so_far = unj_so_far = 0
    inf_ap = 0.0
    for j, c in enumerate(q.codes):
        if c == NONPOOL:
            continue
        if c == UNJUDGED:
            unj_so_far += 1
            continue
        if c >= q.L:
            rel_so_far += 1
            if j == 0:
                inf_ap += 1.0
            else:
                fj = float(j)
                inf_ap += (1.0 / (fj + 1.0)
                           + (fj / (fj + 1.0))
                           * ((rel_so_far - 1 + nonrel_so_far + unj_so_far) / fj)
                           * ((rel_so_far - 1 + INFAP_EPSILON)
                              / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)))
        else:
            nonrel_so_far += 1
    return div(inf_ap, q.R) if q.R > 0 else 0.0


def m_Rprec_mult(q, multipliers):
    """Plain precision at c = (long)(x*R + 0.9) documents.

    c <= 0 gives 0; c > n gives num_rel_ret / c; otherwise relat(c) / c.
    The relevant count at c is obtained like the C code, by counting down
    from num_rel_ret over ranks n..c+1 (identical to relat(c) for L >= 0;
    for the pathological L < 0 it is what trec_eval computes).
    """
    out = []
    for x in multipliers:
        c = c_long(x * q.R + 0.9)
        if c <= 0:
            out.append(0.0)
        elif c > q.n:
            out.append(q.num_rel_ret / c)
        else:
            rel_at_c = q.num_rel_ret - sum(1 for i in range(c + 1, q.n + 1) if q.rel(i))
            out.append(rel_at_c / c if rel_at_c > 0 else 0.0)
    return out


def m_utility(q, params):
    if len(params) != 4:
        raise ValueError("trec_eval.calc_utility: improper number of coefficients")
    a = q.num_rel_ret
    b = q.n - a
    c = q.R - a
    d = q.num_docs_in_coll + a - q.n - q.R
    return params[0] * a + params[1] * b + params[2] * c + params[3] * d


def m_11pt_avg(q, levels, semantics):
    cutoffs = [_recall_cutoff(p, q.R, semantics) for p in levels]
    total = [0.0]

    def sink(idx, value):
        total[0] += value   # descending parameter index order, as in C

    _interpolated_sum(q, cutoffs, sink)
    return div(total[0], len(levels))


def m_binG(q):
    rel_so_far = 0
    s = 0.0
    for i, c in enumerate(q.codes):
        if c >= q.L:
            rel_so_far += 1
            s += 1.0 / math.log2(3 + i - rel_so_far)
    return div(s, q.R) if rel_so_far else 0.0


def m_G(q, table):
    cursor = IdealCursor(table)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    min_cost = 1.0
    i = 0
    while i < q.n and cursor.gain > 0.0:                     # phase 1
        g = gain_of(table, q.codes[i])
        sum_results += g
        ig = cursor.advance()
        if ig > 0.0:
            sum_ideal += ig
        sum_cost += ig if ig >= min_cost else min_cost
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < q.n:                                           # phase 2
        g = gain_of(table, q.codes[i])
        sum_results += g
        sum_cost += min_cost
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while cursor.gain > 0.0:                                 # phase 3
        ig = cursor.advance()
        if ig > 0.0:
            sum_ideal += ig
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


def dcg_and_ideal(q, table):
    dcg = 0.0
    for i, c in enumerate(q.codes, 1):
        g = gain_of(table, c)
        if g != 0:
            dcg += g / math.log2(i + 1)
    idcg = 0.0
    for j, g in enumerate(ideal_gains(table), 1):
        idcg += g / math.log2(j + 1)
    return dcg, idcg


def m_ndcg(q, table):
    dcg, idcg = dcg_and_ideal(q, table)
    return dcg / idcg if idcg > 0.0 else 0.0


def m_ndcg_rel(q, table):
    ideal = ideal_gains(table)
    dcg = idcg = s = 0.0
    nrel = nret = 0
    for i in range(1, q.n + 1):
        g = gain_of(table, q.codes[i - 1])
        if g != 0:
            dcg += g / math.log2(i + 1)
        if i <= len(ideal):
            nrel += 1
            idcg += ideal[i - 1] / math.log2(i + 1)
        if g > 0:
            s += div(dcg, idcg)
            nret += 1
    for i in range(q.n + 1, len(ideal) + 1):
        nrel += 1
        idcg += ideal[i - 1] / math.log2(i + 1)
    s += div((nrel - nret) * dcg, idcg)
    return div(s, nrel) if s > 0.0 else 0.0


def m_Rndcg(q, table):
    if q.R == 0:
        return 0.0
    cursor = IdealCursor(table)
    dcg = idcg = s = 0.0
    old = cursor.gain
    cnt = 0
    i = 0
    while i < q.n and cursor.gain > 0.0:                     # phase 1
        g = gain_of(table, q.codes[i])
        ig = cursor.advance()
        if ig != old:
            if idcg > 0.0:
                s += dcg / idcg
                cnt += 1
            old = ig
        if g != 0:
            dcg += g / math.log2(i + 2)
        if ig > 0.0:
            idcg += ig / math.log2(i + 2)
        i += 1
    if i < q.n:                                              # phase 2
        while i < q.n:
            g = gain_of(table, q.codes[i])
            if g != 0:
                dcg += g / math.log2(i + 2)
            i += 1
        if idcg > 0.0:
            s += dcg / idcg
            cnt += 1
    while cursor.gain > 0.0:                                 # phase 3
        ig = cursor.advance()
        if ig != old:
            if idcg > 0.0:
                s += dcg / idcg
                cnt += 1
            old = ig
        if ig > 0.0:
            idcg += ig / math.log2(i + 2)
        i += 1
    return div(s, cnt)


def m_ndcg_cut(q, cutoffs):
    ideal_levels = []
    for k in range(q.nlev - 1, 0, -1):
        ideal_levels.extend([k] * q.levels[k])
    out = []
    for k in cutoffs:
        dcg = 0.0
        for i, c in enumerate(q.codes[:k], 1):
            if c > 0:
                dcg += c / math.log2(i + 1)
        idcg = 0.0
        for j, g in enumerate(ideal_levels[:k], 1):
            idcg += g / math.log2(j + 1)
        out.append(dcg / idcg if idcg > 0.0 else dcg)
    return out


def m_map_cut(q, cutoffs):
    if q.R == 0:
        return [0.0] * len(cutoffs)
    return [_ap_sum(q, k)[0] / q.R for k in cutoffs]


def m_relative_P(q, cutoffs):
    if q.R == 0:
        return [0.0] * len(cutoffs)
    return [q.relat(k) / min(k, q.R) for k in cutoffs]


def m_success(q, cutoffs):
    return [1.0 if q.relat(k) > 0 else 0.0 for k in cutoffs]


def m_set_P(q):
    return q.num_rel_ret / q.n if q.n > 0 else 0.0


def m_set_relative_P(q):
    m = min(q.n, q.R)
    return q.num_rel_ret / m if m > 0 else 0.0


def m_set_recall(q):
    return q.num_rel_ret / q.R if q.R > 0 else 0.0


def m_set_map(q):
    if q.n > 0 and q.R > 0:
        return (q.num_rel_ret * q.num_rel_ret) / (q.n * q.R)
    return 0.0


def m_set_F(q, params):
    if q.num_rel_ret == 0:
        return 0.0
    P = div(q.num_rel_ret, q.n)
    Rc = div(q.num_rel_ret, q.R)
    x = params[0]
    return div((x + 1.0) * P * Rc, x * P + Rc)


def m_num_nonrel_judged_ret(q):
    return float(q.n - q.num_nonpool - q.num_unjudged - q.num_rel_ret)


def m_yaap(q):
    s, _ = _ap_sum(q)
    return math.log(div(1.0 + s, 1.0 + q.R - s))


def _rbp_p(pairs):
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value                 # the last "p" pair wins (C loop)
    return p


def m_rbp(q, pairs, semantics):
    p = _rbp_p(pairs)
    table = build_gain_table(q, pairs, semantics)
    if table:
        # Intended normalisation (spec 8.1): min/max over all table entries.
        mn = min(e.gain for e in table)
        mx = max(e.gain for e in table)
        if mn < 0 or mx > 1:
            for e in table:
                e.gain = div(e.gain - mn, mx - mn)
    s = 0.0
    cur_p = 1.0
    for c in q.codes:
        g = gain_of(table, c)
        if g != 0:
            s += g * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * s


def m_rbp_resid(q, pairs):
    p = _rbp_p(pairs)
    unj_so_far = 0
    s = 0.0
    cur_p = 1.0
    for c in q.codes:
        if c < 0:
            unj_so_far += 1
            s += cur_p
        cur_p = cur_p * p
    return cur_p + (1 - p) * s if unj_so_far else 0.0


def m_unj(q, cutoffs):
    out = []
    for k in cutoffs:
        unj = sum(1 for c in q.codes[:k] if c == NONPOOL or c == UNJUDGED)
        out.append(unj / k)
    return out


def compute_query(q, inst, semantics, run_id):
    """Values of one MeasureInstance for one query, aligned with inst.names."""
    name = inst.mdef.name
    P = inst.params
    pytrec = semantics == "pytrec_eval"
    if name == "runid":
        return [0.0 if pytrec else run_id]
    if name == "num_q":
        return [1.0]
    if name == "num_ret":
        return [float(q.n)]
    if name == "num_rel":
        return [float(q.R)]
    if name == "num_rel_ret":
        return [float(q.num_rel_ret)]
    if name == "map":
        return [m_map(q)]
    if name == "gm_map":
        return [m_gm(m_map(q))]
    if name == "Rprec":
        return [m_Rprec(q)]
    if name == "bpref":
        return [m_bpref(q)]
    if name == "recip_rank":
        return [m_recip_rank(q)]
    if name == "iprec_at_recall":
        return m_iprec_at_recall(q, P, semantics)
    if name == "P":
        return m_P(q, P)
    if name == "relstring":
        return [0.0 if pytrec else m_relstring(q, P)]
    if name == "recall":
        return m_recall(q, P)
    if name == "infAP":
        return [m_infAP(q)]
    if name == "gm_bpref":
        return [m_gm(m_bpref(q))]
    if name == "Rprec_mult":
        return m_Rprec_mult(q, P)
    if name == "utility":
        return [m_utility(q, P)]
    if name == "11pt_avg":
        return [m_11pt_avg(q, P, semantics)]
    if name == "binG":
        return [m_binG(q)]
    if name == "G":
        return [m_G(q, build_gain_table(q, P, semantics))]
    if name == "dcg":
        return [dcg_and_ideal(q, build_gain_table(q, P, semantics))[0]]
    if name == "ideal_dcg":
        return [dcg_and_ideal(q, build_gain_table(q, P, semantics))[1]]
    if name == "ndcg":
        return [m_ndcg(q, build_gain_table(q, P, semantics))]
    if name == "ndcg_rel":
        return [m_ndcg_rel(q, build_gain_table(q, P, semantics))]
    if name == "Rndcg":
        return [m_Rndcg(q, build_gain_table(q, P, semantics))]
    if name == "ndcg_cut":
        return m_ndcg_cut(q, P)
    if name == "map_cut":
        return m_map_cut(q, P)
    if name == "relative_P":
        return m_relative_P(q, P)
    if name == "success":
        return m_success(q, P)
    if name == "set_P":
        return [m_set_P(q)]
    if name == "set_relative_P":
        return [m_set_relative_P(q)]
    if name == "set_recall":
        return [m_set_recall(q)]
    if name == "set_map":
        return [m_set_map(q)]
    if name == "set_F":
        return [m_set_F(q, P)]
    if name == "num_nonrel_judged_ret":
        return [m_num_nonrel_judged_ret(q)]
    if name == "yaap":
        return [m_yaap(q)]
    if name == "rbp":
        return [m_rbp(q, P, semantics)]
    if name == "rbp_resid":
        return [m_rbp_resid(q, P)]
    if name == "unj":
        return m_unj(q, P)
    raise AssertionError(f"no implementation for {name}")


def _bogus_cleanup(names, values):
    """-c clean-up by exact printed name (spec 4.4)."""
    out = []
    for name, value in zip(names, values):
        if name == "num_ret":
            value = 0.0
        elif name == "utility":
            value = 0.0
        elif name == "relstring":
            value = "" if isinstance(value, str) else value
        elif name.startswith("unj"):
            value = 0.0
        elif name == "rbp_resid":
            value = 0.0
        out.append(value)
    return out


# ---------------------------------------------------------------------------
# Result object and output formatting (spec sections 6 and 7)
# ---------------------------------------------------------------------------

def _c_fmt(fmt, x):
    """C printf of one double with %f-style formats, including -nan / nan."""
    if math.isnan(x):
        width = re.match(r"%-?(\d*)", fmt).group(1)
        text = "-nan" if math.copysign(1.0, x) < 0 else "nan"
        return text.rjust(int(width)) if width else text
    return fmt % x


def _fmt_double(x):
    return _c_fmt("%6.4f", x)


@dataclass
class Reference:
    """Result of :func:`evaluate`.

    ``per_query[qid][name]`` and ``summary[name]`` are keyed by printed output
    name; ``order`` lists the names in trec_eval's table order.  If two
    double cutoffs print the same name (``.331`` and ``.332``), the dicts keep
    the last value while :meth:`format_trec` prints every line, like trec_eval.
    """

    per_query: dict
    summary: dict
    order: list
    kinds: list
    missing: list
    run_id: str
    semantics: str
    dropped_empty: list = field(default_factory=list)   # pytrec_eval: empty judgment dicts
    _rows: dict = field(default_factory=dict, repr=False)      # qid -> values aligned with order
    _summary_rows: list = field(default_factory=list, repr=False)

    def format_trec(self, per_query: bool) -> str:
        """trec_eval 10's stdout: ``-q`` lines if per_query, then the summary."""
        lines = []

        def emit(name, kind, qid, value):
            if kind == K_RUNID:
                lines.append("%-22s\t%s\t%s" % (name, qid, value))
            elif kind in (K_LONG, K_NUMQ):
                lines.append("%-22s\t%s\t%d" % (name, qid, c_long(value)))
            elif kind == K_STR:
                text = value if isinstance(value, str) else _fmt_double(value)
                lines.append("%-22s\t%s\t'%s'" % (name, qid, text))
            else:
                lines.append("%-22s\t%s\t%s" % (name, qid, _fmt_double(value)))

        if per_query:
            for qid, values in self._rows.items():
                for name, kind, value in zip(self.order, self.kinds, values):
                    if kind in (K_RUNID, K_NUMQ, K_GM):
                        continue
                    emit(name, kind, qid, value)
        for name, kind, value in zip(self.order, self.kinds, self._summary_rows):
            if kind == K_STR:
                continue
            emit(name, kind, "all", value)
        return "".join(line + "\n" for line in lines)


def _qid_key(qid):
    return _bytes(qid)


def evaluate(qrels, run, measures, *, relevance_level=1, judged_only=False,
             max_docs=None, complete=False, semantics="trec_eval",
             num_docs_in_coll=0, run_id="run"):
    """Evaluate ``run`` against ``qrels`` the way trec_eval does.

    Parameters mirror trec_eval's options: ``relevance_level`` is ``-l``,
    ``judged_only`` is ``-J``, ``max_docs`` is ``-M``, ``complete`` is ``-c``,
    ``num_docs_in_coll`` is ``-N``, ``measures`` are ``-m`` specs and
    ``run_id`` is the run_id field printed by ``runid``.

    Raises ValueError for bad measure specs, ``max_docs < 0``, NaN scores,
    measures unsupported by the chosen semantics, a utility without exactly
    four coefficients, and (trec_eval semantics) when no query is evaluated
    ("No queries with both results and relevance info").  Under pytrec_eval
    semantics an empty evaluation returns empty ``per_query`` and ``summary``,
    like pytrec_eval's ``{}``, and ``relevance_level`` must be >= 1.
    """
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {SEMANTICS}; got {semantics!r}")
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, int)
                                 or max_docs < 0):
        raise ValueError(f"max_docs must be None or an int >= 0; got {max_docs!r}")
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int):
        raise ValueError(f"relevance_level must be an int; got {relevance_level!r}")
    if semantics == "pytrec_eval" and relevance_level < 1:
        # pytrec_eval raises TypeError("Argument relevance_level should be
        # positive.") for 0; negative levels are undefined there (observed:
        # wrong values and segmentation faults).
        raise ValueError(f"relevance_level must be >= 1 under semantics='pytrec_eval'; "
                         f"got {relevance_level!r}")
    instances = parse_measures(measures, semantics)

    order, kinds = [], []
    for inst in instances:
        for name in inst.names:
            order.append(name)
            kinds.append(inst.mdef.kind)

    rows = {}
    missing = []
    dropped_empty = []
    for qid in sorted(qrels, key=_qid_key):
        judgments = {doc: int(rel) for doc, rel in qrels[qid].items()}
        if semantics == "pytrec_eval" and not judgments:
            dropped_empty.append(qid)
            continue
        bogus = False
        if qid in run:
            ranking = run[qid]
        elif complete:
            ranking = {BOGUS_DOCNO: 1.0}
            bogus = True
        else:
            missing.append(qid)
            continue
        q = build_query(judgments, ranking, L=relevance_level, max_docs=max_docs,
                        judged_only=judged_only, semantics=semantics,
                        num_docs_in_coll=num_docs_in_coll)
        values = []
        for inst in instances:
            v = compute_query(q, inst, semantics, run_id)
            if bogus:
                v = _bogus_cleanup(inst.names, v)
            values.extend(v)
        rows[qid] = values

    nq = len(rows)
    if nq == 0 and semantics == "trec_eval":
        raise ValueError("trec_eval: No queries with both results and relevance info")

    summary_rows = []
    for idx, kind in enumerate(kinds):
        column = [values[idx] for values in rows.values()]
        if kind == K_RUNID:
            summary_rows.append(run_id)
        elif kind == K_NUMQ:
            summary_rows.append(float(nq))
        elif kind == K_STR:
            summary_rows.append(None)
        else:
            total = 0.0
            for v in column:             # sequential, in qid order
                total += v
            if kind == K_LONG:
                if complete and order[idx] == "num_rel":
                    total = float(sum(1 for qj in qrels.values()
                                      for rel in qj.values() if int(rel) > 0))
                summary_rows.append(total)
            elif kind == K_GM:
                summary_rows.append(math.exp(div(total, nq)))
            else:
                summary_rows.append(div(total, nq))

    per_query = {qid: dict(zip(order, values)) for qid, values in rows.items()}
    summary = {name: value for name, kind, value in zip(order, kinds, summary_rows)
               if kind != K_STR}
    if not rows:
        summary = {}
    return Reference(per_query=per_query, summary=summary, order=order, kinds=kinds,
                     missing=missing, run_id=run_id, semantics=semantics,
                     dropped_empty=dropped_empty, _rows=rows, _summary_rows=summary_rows)
