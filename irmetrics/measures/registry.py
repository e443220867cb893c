"""The measure registry: one declaration per measure, read by every other layer.

A measure is declared once with :func:`measure` beside its vectorised kernel. The
declaration carries its trec_eval name, the parameter type and defaults, the
table position (trec_eval prints measures in a fixed order, docs/reference/trec_eval.md §5), how its
per-query values are printed and aggregated, the nickname groups it belongs to,
its friendly (ir_measures-style) spelling and whether pytrec_eval supports it.
The name parsers, evaluate(), the CLI, the pytrec_eval drop-in and the generated
docs all read :data:`REGISTRY`; there is no second table of names.

Importing every family costs more than a small evaluation (issue 34), so
:data:`REGISTRY` is filled from :mod:`irmetrics.measures.declared`, an index generated
from the declarations (``python -m irmetrics.measures.index``; a test fails when it and
the family modules disagree). An entry's kernel and docstring arrive when its family
module is imported: on the first computation of one of its measures, or by
:func:`load` / :func:`load_all`; the declaration checks itself against its entry, which
is completed in place once the module has run, so every reference to it stays valid.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, fields
from typing import Any, Callable

from .params import BINARY_OPTIONS, NoParams

#: Aggregations across queries (docs/reference/trec_eval.md §6).
MEAN, SUM, GEOMETRIC, NUM_Q, RUNID, NONE = "mean", "sum", "gm", "num_q", "runid", "none"

#: How per-query values print: %6.4f, %ld, quoted string, or not at all.
DOUBLE, LONG, STRING, HIDDEN = "double", "long", "string", "hidden"

#: What ``complete=True`` resets on placeholder queries (docs/reference/trec_eval.md §4.4).
RESET_ALWAYS, RESET_UNPARAMETERISED = "always", "unparameterised"


@dataclass(frozen=True)
class MeasureDef:
    """Declaration of one measure. See :func:`measure` for the fields."""

    name: str
    order: int
    kernel: Callable
    params: Any = NoParams()
    printed: str = DOUBLE
    summary: str = MEAN
    groups: frozenset = frozenset()
    pytrec_eval: bool = True
    friendly: str | None = None
    friendly_cutoff: bool = False
    complete_reset: str | None = None
    family: str = ""
    doc: str = ""
    aliases: dict = field(default_factory=dict)
    options: dict = field(default_factory=lambda: dict(BINARY_OPTIONS))
    extra: dict = field(default_factory=dict)


REGISTRY: dict[str, MeasureDef] = {}

#: Nicknames (docs/reference/trec_eval.md §4.5). Members are filled in by the declarations.
NICKNAMES: dict[str, list[str]] = {
    "official": [], "all_trec": [], "set": [],
    "all_prefs": [], "prefs": [], "qrels_jg": [],
}

_GROUP_KEYS = {"O": "official", "T": "all_trec", "S": "set",
               "Pa": "all_prefs", "Pr": "prefs", "J": "qrels_jg"}


def measure(name: str, *, order: int, params=NoParams(), printed=DOUBLE, summary=MEAN,
            groups: str = "", pytrec_eval: bool = True, friendly: str | None = None,
            friendly_cutoff: bool = False, complete_reset: str | None = None,
            aliases: dict | None = None, options: dict | None = None, **extra):
    """Register the decorated kernel as measure ``name``.

    Parameters
    ----------
    name : str
        trec_eval name (``"P"``, ``"ndcg_cut"``).
    order : int
        Row of trec_eval's master table: output order of both per-query and summary lines.
    params : parameter type from :mod:`irmetrics.measures.params`
    printed : {"double", "long", "string", "hidden"}
    summary : {"mean", "sum", "gm", "num_q", "runid", "none"}
    groups : str
        Space-separated group keys: O official, T all_trec, S set, Pa all_prefs, Pr prefs,
        J qrels_jg.
    pytrec_eval : bool
        Whether pytrec-eval-terrier 0.5.11 supports the measure.
    friendly : str, optional
        ir_measures-style base name (``"P"`` for ``P@10``, ``"AP"``).
    friendly_cutoff : bool
        The friendly form takes ``@k``.
    complete_reset : {"always", "unparameterised"}, optional
        Value forced to 0 on ``complete=True`` placeholder queries.
    aliases : dict, optional
        How other tools spell the same concept, ``{tool: name}`` with tool one of
        ``"ir_measures"``, ``"ranx"``, ``"torchmetrics"`` (documentation only; their
        edge-case semantics may differ and the parsers do not accept these names).
    options : dict of {str: params.Option}, optional
        Keyword options of the friendly spelling (``ERR@k``, ``Compat(p=0.9)``); default
        ``rel`` and ``judged_only`` (:data:`~irmetrics.measures.params.BINARY_OPTIONS`).
    **extra
        Free-form facts read by other layers: ``rel_formats``; ``source`` (the tool and
        version whose definition the measure follows) and ``cousin`` (how it differs from
        its nearest trec_eval measure) for the generated docs; ``max_label`` (labels above
        it are refused, as gdeval does); ``friendly_aliases`` (more friendly names, ``MRR``);
        ``ir_measures_provider`` / ``ir_measures_ties`` (the ir_measures 0.4.3 provider the
        definition follows and its tie order, read by ``irmetrics.compat.ir_measures``).

    The kernel is called as ``kernel(ctx, params)`` and returns an array of shape
    ``(n_queries, n_outputs)``.
    """

    def register(kernel):
        spec = MeasureDef(
            name=name, order=order, kernel=kernel, params=params, printed=printed,
            summary=summary, pytrec_eval=pytrec_eval, friendly=friendly,
            friendly_cutoff=friendly_cutoff, complete_reset=complete_reset,
            groups=frozenset(_GROUP_KEYS[g] for g in groups.split()),
            family=kernel.__module__.rsplit(".", 1)[-1], doc=kernel.__doc__ or "",
            aliases=dict(aliases or {}),
            options=dict(BINARY_OPTIONS if options is None else options), extra=extra,
        )
        if name in DECLARATIONS:
            raise RuntimeError(f"measure {name!r} declared twice")
        DECLARATIONS[name] = spec
        indexed = REGISTRY.get(name)
        if indexed is not None and isinstance(indexed.kernel, Deferred):
            if not REGENERATING:
                _check(indexed, spec)
            return kernel
        if spec.family in FAMILY_MODULES and not REGENERATING:
            raise RuntimeError(f"measure {name!r} of irmetrics.measures.{spec.family} is not in"
                               f" the index irmetrics/measures/declared.py; {_REGENERATE}")
        REGISTRY[name] = spec
        for group in spec.groups:
            NICKNAMES[group].append(name)
        return kernel

    return register


def names() -> list[str]:
    """trec_eval names of every registered measure, in output order."""
    return [m.name for m in sorted(REGISTRY.values(), key=lambda m: m.order)]


# ------------------------------------------------ user measures, asked about on every road
#: The ``family`` of every user measure's declaration (:mod:`irmetrics.measures.custom`).
USER_FAMILY = "custom"


def is_user_measure(measure: MeasureDef) -> bool:
    """Whether a registry entry was defined by the user (:func:`define_measure`)."""
    return "user_measure" in measure.extra


def user_measures_of(requests) -> list:
    """The user measures among parsed requests (each once), e.g. to ship to Spark."""
    found = {}
    for req in requests:
        if is_user_measure(req.measure):
            spec = req.measure.extra["user_measure"]
            found[spec.name] = spec
    return list(found.values())


def is_user_spelling(spec: str) -> bool:
    """Whether ``spec`` names a user measure (``GradedP(max_label=3)@10``), well spelled
    or not: what the pytrec_eval drop-in hands to the parser besides pytrec_eval's own
    names, so that ``GradedP(max_label='x')`` or ``GradedP@0`` get the parser's error
    about the parameter rather than "unknown measure".

    >>> import irmetrics as irm
    >>> _ = irm.define_measure("Hits", lambda view: view.count(view.is_rel))
    >>> is_user_spelling("hits(rel=2)@10"), is_user_spelling("Hits@0"), is_user_spelling("P@10")
    (True, True, False)
    >>> irm.remove_measure("Hits")
    """
    base = re.match(r"\s*([^\W\d]\w*)", spec) if isinstance(spec, str) else None
    if base is None:
        return False
    name = base.group(1).lower()
    return any(is_user_measure(m) and key.lower() == name for key, m in REGISTRY.items())


def pytrec_eval_supported(measure: MeasureDef) -> bool:
    """Whether a measure may be computed under ``semantics="pytrec_eval"``: the ones
    pytrec_eval has, and the user's own."""
    return measure.pytrec_eval or is_user_measure(measure)


# ----------------------------------------------------------------- families on first use
#: The declarations as their ``@measure`` decorators made them, in the order they ran.
DECLARATIONS: dict[str, MeasureDef] = {}

#: Set by the index generator: declarations then register as written, unchecked.
REGENERATING = False

_REGENERATE = "regenerate it with `python -m irmetrics.measures.index`."


class Deferred:
    """The kernel of a declared measure whose family module is not imported yet: the
    first call imports it (:func:`load`, which completes the entry) and computes."""

    __slots__ = ("family", "name")

    def __init__(self, family: str, name: str) -> None:
        self.family, self.name = family, name

    def __call__(self, ctx, params):
        return load(self.name).kernel(ctx, params)

    def __eq__(self, other) -> bool:  # a copy (pickled, to Spark) is the same kernel
        return isinstance(other, Deferred) and (other.family, other.name) == (
            self.family, self.name)

    def __hash__(self) -> int:
        return hash((self.family, self.name))

    def __repr__(self) -> str:
        return f"<kernel of {self.name!r} in irmetrics.measures.{self.family}, not imported yet>"


def _check(indexed: MeasureDef, spec: MeasureDef) -> None:
    """Check a declaration against its index entry."""
    differ = [f.name for f in fields(MeasureDef) if f.name not in ("kernel", "doc")
              and getattr(indexed, f.name) != getattr(spec, f.name)]
    if differ:
        raise RuntimeError(f"the declaration of measure {spec.name!r} differs from its entry in"
                           f" irmetrics/measures/declared.py ({', '.join(differ)}); {_REGENERATE}")


def _complete(family: str) -> None:
    """Give the entries of an imported family their kernels and docstrings, in place
    (requests and caches hold the entry itself). Only once its module has run to the
    end: a kernel may call what the module defines below it, and a thread that meets
    a still deferred kernel waits in :func:`load` for the import another thread runs."""
    for name, spec in list(DECLARATIONS.items()):
        indexed = REGISTRY.get(name)
        if spec.family == family and indexed is not None and \
                isinstance(indexed.kernel, Deferred):
            object.__setattr__(indexed, "kernel", spec.kernel)  # frozen: completed here
            object.__setattr__(indexed, "doc", spec.doc)


def load(name: str) -> MeasureDef:
    """The entry of measure ``name`` with its kernel and docstring: imports its family
    module if it is not imported yet.

    Examples
    --------
    >>> from irmetrics.measures.registry import load
    >>> load("P").kernel.__name__
    'precision'
    """
    m = REGISTRY[name]
    if isinstance(m.kernel, Deferred):
        family = m.kernel.family
        importlib.import_module(f"irmetrics.measures.{family}")  # waits for another thread's
        _complete(family)
        if isinstance(m.kernel, Deferred):  # the module did not declare it
            raise RuntimeError(f"irmetrics.measures.{m.family} does not declare measure"
                               f" {name!r}, which irmetrics/measures/declared.py lists;"
                               f" {_REGENERATE}")
    return m


def load_all() -> None:
    """Import every measure family (what reading all kernels and docstrings needs: the
    CLI's help, the generated docs).

    Examples
    --------
    >>> from irmetrics.measures.registry import REGISTRY, load_all
    >>> load_all()
    >>> REGISTRY["bpref"].doc != ""
    True
    """
    for family in FAMILY_MODULES:
        importlib.import_module(f"irmetrics.measures.{family}")
        _complete(family)


def _declare(entries) -> None:
    for family, name, values in entries:
        spec = MeasureDef(name=name, kernel=Deferred(family, name), family=family, **values)
        REGISTRY[name] = spec
        for group in spec.groups:
            NICKNAMES[group].append(name)


from .declared import DECLARED, FAMILY_MODULES  # noqa: E402  (needs MeasureDef's types)

_declare(DECLARED)
