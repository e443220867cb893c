"""ir_measures' measure objects: ``from ir_measures.measures import Judged`` works here.

Each object names a measure and its parameters (``nDCG@10``, ``AP(rel=2)``); it computes
nothing itself (:mod:`.providers` does, on irmetrics' engine). Objects print, compare and
hash like ir_measures 0.4.3's, compare equal to the real ir_measures objects of the same
spelling, and carry the same parameter descriptions (:class:`ParamInfo`), checked by
:meth:`Measure.validate_params` as ir_measures checks them when a provider is chosen.
"""

from __future__ import annotations

import copy
from collections import namedtuple

from ...exceptions import ParameterError, UnknownMeasureError

CalcResults = namedtuple("CalcResults", ["aggregated", "per_query"])
CalcResults.__doc__ = "Aggregates and per-query metrics, shaped as ir_measures' ``CalcResults``."
Metric = namedtuple("Metric", ["query_id", "measure", "value"])
Metric.__doc__ = "One per-query value, shaped as ir_measures' ``Metric``."

#: The pipeline a measure's own ``calc``/``iter_calc``/... use: ir_measures'
#: ``DefaultPipeline``, which the providers module defines above the measures and
#: installs here (:func:`use_pipeline`), so the measures never import what computes them.
_PIPELINE: list = []


def use_pipeline(pipeline) -> None:
    """Make ``pipeline`` the one a measure's ``calc``, ``iter_calc``, ... go through."""
    _PIPELINE[:] = [pipeline]


class _NotProvided:
    def __repr__(self) -> str:
        return "NOT_PROVIDED"


#: A parameter left unset (ir_measures' ``NOT_PROVIDED``).
NOT_PROVIDED = _NotProvided()


class ParamInfo:
    """One parameter of a measure, as ir_measures describes it: its type, whether it is
    required, its allowed values and its default.

    Examples
    --------
    >>> ParamInfo(dtype=int, default=1).validate(2), ParamInfo(dtype=int).validate(2.5)
    (True, False)
    """

    def __init__(self, dtype=None, required=False, choices=NOT_PROVIDED, default=NOT_PROVIDED,
                 desc=None):
        self.dtype = dtype
        self.required = required
        self.choices = choices
        self.default = default
        self.desc = desc

    def validate(self, value) -> bool:
        """ir_measures' rule: unset only if not required; else of ``dtype`` and among
        ``choices``."""
        if value is NOT_PROVIDED:
            return not self.required
        if self.dtype is not None and not isinstance(value, self.dtype):
            return False
        return self.choices is NOT_PROVIDED or value in self.choices

    def problem(self, value) -> str:
        """Why :meth:`validate` refuses ``value``: the constraint, for a message."""
        if value is NOT_PROVIDED:
            return "is required"
        if self.dtype is not None and not isinstance(value, self.dtype):
            return f"must be of type {self.dtype.__name__}; got {value!r}"
        return f"must be one of {list(self.choices)!r}; got {value!r}"


def _info(dtype, default=NOT_PROVIDED, *, required=False, choices=NOT_PROVIDED) -> ParamInfo:
    return ParamInfo(dtype=dtype, required=required, choices=choices, default=default)


_CUTOFF, _CUTOFF_REQUIRED = _info(int), _info(int, required=True)
_REL, _JUDGED = _info(int, 1), _info(bool, False)
_MIN_REL, _MAX_REL = _info(int, 0), _info(int, required=True)
_BINARY = {"rel": _REL, "judged_only": _JUDGED}

#: ir_measures 0.4.3's measures: name -> (parameter set by ``@``, {parameter: ParamInfo}).
#: The public API of its measure classes (names, parameters, types, defaults).
_PARAMS = {
    "Accuracy": ("cutoff", {"cutoff": _CUTOFF, "rel": _REL}),
    "AP": ("cutoff", {"cutoff": _CUTOFF, **_BINARY}),
    "BPM": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, "T": _info(float, 1.0),
                       "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "Bpref": ("cutoff", {"rel": _REL}),
    "Compat": ("cutoff", {"p": _info(float, 0.95), "normalize": _info(bool, True)}),
    "ERR_IA": ("cutoff", {"cutoff": _CUTOFF, **_BINARY}),
    "nERR_IA": ("cutoff", {"cutoff": _CUTOFF, **_BINARY}),
    "alpha_DCG": ("cutoff", {"cutoff": _CUTOFF, "rel": _REL, "alpha": _info(float, 0.5),
                             "judged_only": _JUDGED}),
    "alpha_nDCG": ("cutoff", {"cutoff": _CUTOFF, "rel": _REL, "alpha": _info(float, 0.5),
                              "judged_only": _JUDGED}),
    "NRBP": ("cutoff", {"rel": _REL, "alpha": _info(float, 0.5), "beta": _info(float, 0.5)}),
    "nNRBP": ("cutoff", {"rel": _REL, "alpha": _info(float, 0.5), "beta": _info(float, 0.5)}),
    "AP_IA": ("cutoff", dict(_BINARY)),
    "P_IA": ("cutoff", {"cutoff": _CUTOFF, **_BINARY}),
    "StRecall": ("cutoff", {"cutoff": _CUTOFF, "rel": _REL}),
    "ERR": ("cutoff", {"cutoff": _CUTOFF}),
    "INST": ("cutoff", {"T": _info(float, 1.0), "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "INSQ": ("cutoff", {"T": _info(float, 1.0), "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "infAP": ("cutoff", {"rel": _REL}),
    "IPrec": ("recall", {"recall": _info(float, required=True), **_BINARY}),
    "Judged": ("cutoff", {"cutoff": _CUTOFF}),
    "nDCG": ("cutoff", {"cutoff": _CUTOFF,
                        "dcg": _info(str, "log2", choices=("log2", "exp-log2")),
                        "gains": _info(dict), "judged_only": _JUDGED}),
    "NERR8": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "NERR9": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "NERR10": ("cutoff", {"p": _info(float, 0.9), "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "NERR11": ("cutoff", {"T": _info(float, 1.0), "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "NumQ": ("cutoff", {}),
    "NumRel": ("cutoff", {"rel": _REL}),
    "NumRet": ("cutoff", {"rel": _info(int)}),
    "P": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, **_BINARY}),
    "R": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, **_BINARY}),
    "RBP": ("cutoff", {"cutoff": _CUTOFF, "p": _info(float, 0.8), "rel": _info(int)}),
    "Rprec": ("cutoff", dict(_BINARY)),
    "RR": ("cutoff", {"cutoff": _CUTOFF, **_BINARY}),
    "SDCG": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, "dcg": _info(str, "log2", choices=("log2",)),
                        "min_rel": _MIN_REL, "max_rel": _MAX_REL}),
    "SetP": ("cutoff", {"rel": _REL, "relative": _info(bool, False), "judged_only": _JUDGED}),
    "SetR": ("cutoff", {"rel": _REL}),
    "SetF": ("cutoff", {"rel": _REL, "beta": _info(float, 1.0), "judged_only": _JUDGED}),
    "SetAP": ("cutoff", dict(_BINARY)),
    "Success": ("cutoff", {"cutoff": _CUTOFF_REQUIRED, **_BINARY}),
}

#: Measures whose aggregate is a sum over queries (ir_measures' ``SumAgg``), not a mean.
_SUMMED = frozenset({"NumQ", "NumRel", "NumRet"})


class Measure:
    """An ir_measures-style measure: ``nDCG@10``, ``AP(rel=2)``, ``P(rel=2)@5``.

    ``measure(**params)`` and ``measure @ value`` return new measures; ``measure[param]``
    reads a parameter (its default when unset). ``str``/``repr`` give ir_measures' spelling
    (parameters at their default are left out), which is also the key of equality and
    hashing. As in ir_measures, building a measure checks only the parameter names (the
    ``@`` value may go to a measure without that parameter, ``SetP(rel=2)@5``, which
    ranx's provider reads); values are checked by :meth:`validate_params` when a
    provider is chosen.

    Examples
    --------
    >>> from irmetrics.compat import ir_measures
    >>> m = ir_measures.nDCG @ 10
    >>> str(m), str(ir_measures.AP(rel=2)), m == ir_measures.parse_measure("nDCG@10")
    ('nDCG@10', 'AP(rel=2)', True)
    """

    NAME: str | None = None
    AT_PARAM = "cutoff"
    SUPPORTED_PARAMS: dict = {}
    #: The value of a query the run does not rank (ir_measures' ``Measure.DEFAULT``).
    DEFAULT = 0.0

    def __init__(self, name: str | None = None, **params):
        if name is not None:  # a built-in ir_measures measure (else a subclass's own)
            if name not in _PARAMS:
                raise UnknownMeasureError(name, suggestions=close_names(name))
            self.NAME = name
            self.AT_PARAM, self.SUPPORTED_PARAMS = _PARAMS[name]
        unknown = sorted(set(params) - set(self.SUPPORTED_PARAMS) - {self.AT_PARAM})
        if unknown:
            raise ParameterError(f"`{self.NAME}'s parameters` must be among"
                                 f" {sorted(self.SUPPORTED_PARAMS)}; got {unknown[0]!r}.")
        self.params = dict(params)

    def __call__(self, **params) -> Measure:
        new = copy.copy(self)  # keeps a subclass and its attributes
        new.params = {**self.params, **params}
        new._check_names()
        return new

    def _check_names(self) -> None:
        Measure.__init__(self, None, **self.params)

    def __matmul__(self, at_value) -> Measure:
        return self(**{self.AT_PARAM: at_value})

    def __getitem__(self, key):
        if key in self.params:
            return self.params[key]
        return self.SUPPORTED_PARAMS[key].default

    def validate_params(self) -> None:
        """Refuse parameters ir_measures refuses when it picks a provider: one the measure
        does not have, a value of the wrong type, a missing required one."""
        extra = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if extra:
            raise ParameterError(
                f"{self} has parameter {extra[0]!r}, which {self.NAME} does not take"
                f" (its parameters: {', '.join(self.SUPPORTED_PARAMS) or 'none'}).")
        for key, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(key, NOT_PROVIDED)
            if not info.validate(value):
                raise ParameterError(f"`{key}` of {self} {info.problem(value)}.")

    def __repr__(self) -> str:
        # Kept with the parameters it spells (hashing, equality and dict keys read it
        # on every lookup); a copy with other parameters spells itself anew.
        cached = self.__dict__.get("_spelled")
        if cached is not None and cached[0] == self.params:
            return cached[1]
        text = self._spelling()
        self.__dict__["_spelled"] = (dict(self.params), text)
        return text

    def _spelling(self, first: str = "") -> str:
        """ir_measures' spelling, with ``first`` (``"model='cwl'"``) before the shown
        parameters."""
        shown = [first] if first else []
        shown += [f"{k}={param_repr(v)}" for k, v in self.params.items()
                  if k != self.AT_PARAM and v != self.SUPPORTED_PARAMS[k].default]
        text = f"{self.NAME}" + (f"({','.join(shown)})" if shown else "")
        if self.AT_PARAM in self.params:
            text += f"@{self.params[self.AT_PARAM]}"
        return text

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        # Also equal to the real ir_measures object of the same spelling.
        return hasattr(other, "NAME") and hasattr(other, "params") and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def aggregator(self):
        """A fresh aggregator of per-query values: :class:`SumAgg` for the counts
        (``NumQ``, ``NumRel``, ``NumRet``), else :class:`MeanAgg`."""
        return SumAgg() if self.NAME in _SUMMED else MeanAgg()

    def iter_calc(self, qrels, run):
        self.validate_params()
        return _PIPELINE[0].iter_calc([self], qrels, run)

    def calc_aggregate(self, qrels, run):
        return _PIPELINE[0].calc_aggregate([self], qrels, run)[self]

    def calc(self, qrels, run):
        agg, per_query = _PIPELINE[0].calc([self], qrels, run)
        return CalcResults(agg[self], per_query)

    def evaluator(self, qrels):
        return _PIPELINE[0].evaluator([self], qrels)


#: ir_measures' old name of :class:`Measure`.
BaseMeasure = Measure


class MeanAgg:
    """Mean of the values added, in the order added (``default`` when none)."""

    def __init__(self, default=float("nan")):
        self.sum, self.count, self.default = 0.0, 0, default

    def add(self, value) -> None:
        self.sum += value
        self.count += 1

    def result(self):
        return self.default if self.count == 0 else self.sum / self.count


class SumAgg:
    """Sum of the values added."""

    def __init__(self):
        self.sum = 0

    def add(self, value) -> None:
        self.sum += value

    def result(self):
        return self.sum


def param_repr(value) -> str:
    """ir_measures' spelling of a parameter value (a dict lists only changed gains)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in sorted(value.items()) if k != v) + "}"
    return repr(value)


def close_names(name: str) -> list[str]:
    """The measure names closest to ``name``, case aside."""
    by_lower: dict[str, str] = {}
    for n in (*_PARAMS, *registry):  # the measures' own names before their aliases
        by_lower.setdefault(n.lower(), n)
    import difflib  # only an unknown name needs it

    close = difflib.get_close_matches(name.lower(), list(by_lower), n=5, cutoff=0.5)
    return [by_lower[c] for c in close]


#: Every measure object by name, aliases included (ir_measures' ``measures.registry``).
registry: dict = {name: Measure(name) for name in _PARAMS}


def register(measure: Measure, aliases=(), name: str | None = None) -> dict:
    """Add ``measure`` to :data:`registry` under its name (or ``name``) and ``aliases``,
    so that :func:`~irmetrics.compat.ir_measures.parse_measure` finds it.

    Parameters
    ----------
    measure : Measure
        The measure object (a class-like base such as ``AP``, or one with parameters).
    aliases : iterable of str
        Further names it is found by.
    name : str, optional
        The name it is registered under; by default ``measure.NAME``.

    Returns
    -------
    dict
        :data:`registry` itself.

    Raises
    ------
    ParameterError
        One of the names is registered already (the names before it are added).

    Examples
    --------
    >>> from irmetrics.compat.ir_measures import parse_measure
    >>> _ = register(AP, aliases=("AvgP",), name="MeanAP")
    >>> parse_measure("AvgP@10"), parse_measure("MeanAP(rel=2)")
    (AP@10, AP(rel=2))
    >>> register(AP)
    Traceback (most recent call last):
    ...
    irmetrics.exceptions.ParameterError: `name` must be a measure name not yet registered; got 'AP'.
    >>> del registry["MeanAP"], registry["AvgP"]
    """
    for key in (name or measure.NAME, *aliases):
        if key in registry:
            raise ParameterError(f"`name` must be a measure name not yet registered;"
                                 f" got {key!r}.")
        registry[key] = measure
    return registry


registry.update({
    "MAP": registry["AP"], "BPref": registry["Bpref"], "α_DCG": registry["alpha_DCG"],
    "α_nDCG": registry["alpha_nDCG"], "MAP_IA": registry["AP_IA"], "NDCG": registry["nDCG"],
    "NumRelRet": registry["NumRet"](rel=1), "Precision": registry["P"],
    "Recall": registry["R"], "RPrec": registry["Rprec"], "MRR": registry["RR"],
    "SetRelP": registry["SetP"](relative=True),
})
globals().update(registry)

__all__ = ["Measure", "BaseMeasure", "ParamInfo", "MeanAgg", "SumAgg", "NOT_PROVIDED",
           "registry", "register"]
__all__ += sorted(registry)
